// Plans and voice rates as data: built-in defaults, files that replace them,
// and files that stop start-up instead of billing wrongly. Billing settings in
// config.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { CatalogError, loadCatalog } from '../../../src/modules/billing/catalog.js';
import { createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';

const dir = mkdtempSync(join(tmpdir(), 'billing-catalog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const included = { seconds_inbound: 60, seconds_outbound: 60, calls_inbound: 1, calls_outbound: 1, leads: 5 };

describe('catalog', () => {
  it('has the three built-in plans and at least 30 countries', () => {
    const catalog = loadCatalog({ plansFile: null, voicePricingFile: null });
    expect(catalog.plans.map((p) => [p.key, p.monthlyCents])).toEqual([
      ['starter', 2900],
      ['growth', 9900],
      ['scale', 29900],
    ]);
    expect(catalog.voiceRates.length).toBeGreaterThanOrEqual(30);
  });

  it('PLANS_FILE and VOICE_PRICING_FILE replace the defaults, in the API too', async () => {
    const plans = file('plans.json', [
      { key: 'solo', name: 'Solo', priceUsd: 9.5, included, stripePriceId: 'price_123' },
    ]);
    const rates = file('rates.json', [{ country: 'FR', name: 'France', inbound: 100, outbound: 420 }]);
    const t = await createTestApp({ env: { PLANS_FILE: plans, VOICE_PRICING_FILE: rates } });
    try {
      const user = await createVerifiedUser(t);
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/api/billing/plan',
            headers: bearer(user.token),
            payload: { plan: 'starter' },
          })
        ).statusCode,
      ).toBe(400);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/billing/plan',
        headers: bearer(user.token),
        payload: { plan: 'solo' },
      });
      const page = await t.app.inject({ method: 'GET', url: new URL(res.json().url).pathname });
      expect(page.body).toContain('Subscribe for $9.50/month');
      const pricing = await t.app.inject({
        method: 'GET',
        url: '/api/pricing/voice-countries',
        headers: bearer(user.token),
      });
      expect(pricing.json()).toEqual([
        { country: 'FR', name: 'France', inboundPerMinute: 0.01, outboundPerMinute: 0.042, currency: 'usd' },
      ]);
    } finally {
      await t.close();
    }
  });

  it('a plan may raise the concurrent calls (callConcurrency); voice rates are looked up by country and direction', () => {
    const catalog = loadCatalog({
      plansFile: file('concurrency-plans.json', [{ key: 'team', priceUsd: 50, included, callConcurrency: 12 }]),
      voicePricingFile: null,
    });
    expect(catalog.plan('team')).toMatchObject({ callConcurrency: 12 });
    expect(loadCatalog({ plansFile: null, voicePricingFile: null }).plan('starter')!.callConcurrency).toBeUndefined();
    expect(catalog.voiceRate('US', 'outbound')).toBe(140);
    expect(catalog.voiceRate('GB', 'inbound')).toBe(100);
    expect(catalog.voiceRate('JM', 'outbound')).toBeNull();
  });

  it.each([
    ['not JSON', '{'],
    ['empty', []],
    ['fractional cents', [{ key: 'a', priceUsd: 9.999, included }]],
    ['missing quantity', [{ key: 'a', priceUsd: 10, included: { ...included, leads: undefined } }]],
    [
      'duplicate keys',
      [
        { key: 'a', priceUsd: 10, included },
        { key: 'a', priceUsd: 20, included },
      ],
    ],
    ['bad price id', [{ key: 'a', priceUsd: 10, included, stripePriceId: 'prod_1' }]],
    ['a call concurrency of 0', [{ key: 'a', priceUsd: 10, included, callConcurrency: 0 }]],
    ['a fractional call concurrency', [{ key: 'a', priceUsd: 10, included, callConcurrency: 2.5 }]],
  ])('a plans file that is %s stops start-up', (_what, content) => {
    expect(() => loadCatalog({ plansFile: file('bad-plans.json', content), voicePricingFile: null })).toThrow(
      CatalogError,
    );
  });

  it('a bad voice pricing file stops start-up', () => {
    expect(() =>
      loadCatalog({
        plansFile: null,
        voicePricingFile: file('bad-rates.json', [{ country: 'usa', inbound: 1, outbound: 1 }]),
      }),
    ).toThrow(CatalogError);
    expect(() => loadCatalog({ plansFile: null, voicePricingFile: join(dir, 'missing.json') })).toThrow(
      /VOICE_PRICING_FILE/,
    );
  });
});

describe('billing configuration', () => {
  it('sandbox by default, top-up 20 dollars', () => {
    const config = loadConfig({ NODE_ENV: 'test' });
    expect(config.billing).toMatchObject({ stripe: null, topupDefaultUsd: 20, plansFile: null });
  });

  it('Stripe needs its webhook secret; a bad key, API base or top-up is reported', () => {
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk_test_abc' })).toThrow(/STRIPE_WEBHOOK_SECRET/);
    try {
      loadConfig({
        STRIPE_SECRET_KEY: 'pk_test_abc',
        STRIPE_WEBHOOK_SECRET: 'whsec_x',
        STRIPE_API_BASE: 'ftp://x',
        CREDITS_TOPUP_USD: '2',
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toMatch(/STRIPE_SECRET_KEY/);
      expect(problems).toMatch(/STRIPE_API_BASE/);
      expect(problems).toMatch(/CREDITS_TOPUP_USD/);
    }
    const ok = loadConfig(
      { STRIPE_SECRET_KEY: 'sk_live_abc', STRIPE_WEBHOOK_SECRET: 'whsec_x', PLANS_FILE: 'plans.json' },
      '/srv',
    );
    expect(ok.billing.stripe).toEqual({
      secretKey: 'sk_live_abc',
      webhookSecret: 'whsec_x',
      apiBase: 'https://api.stripe.com',
    });
    expect(ok.billing.plansFile).toBe('/srv/plans.json');
  });
});
