// The billing routes of spec 4.18 in sandbox mode, end to end: top-up →
// balance, plan → active with card, upgrade → same subscription at the new
// price, portal, pricing; auth levels, returnTo, Idempotency-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckoutInput } from '../../../src/providers/payments/interface.js';
import { SandboxPaymentsProvider } from '../../../src/providers/payments/sandbox.js';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

/** The sandbox provider whose checkout creation can be held open (an in-flight request). */
class GatedSandbox extends SandboxPaymentsProvider {
  gate: Promise<void> | null = null;
  override async createCheckout(input: CheckoutInput) {
    if (this.gate) await this.gate;
    return super.createCheckout(input);
  }
}

const PUBLIC_URL = 'http://127.0.0.1:3000';
const payments = new GatedSandbox(PUBLIC_URL);
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    env: { PUBLIC_URL, RETURN_URL_ORIGINS: 'https://app.example.com' },
    providers: { payments },
  });
});
afterAll(() => t.close());

const get = (url: string, user: TestUser) => t.app.inject({ method: 'GET', url, headers: bearer(user.token) });
const post = (url: string, user: TestUser, payload?: object, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: { ...bearer(user.token), ...headers },
    ...(payload ? { payload } : {}),
  });
const pathOf = (url: string) => new URL(url).pathname;

describe('credits', () => {
  it('top-up walkthrough: balance 0 → checkout page → Pay → redirect to returnTo → balance 20', async () => {
    const user = await createVerifiedUser(t);
    expect((await get('/api/credits', user)).json()).toEqual({ amount: 0, currency: 'usd' });
    const returnTo = 'https://app.example.com/billing?done=1';
    const res = await post(`/api/credits/add?returnTo=${encodeURIComponent(returnTo)}`, user);
    expect(res.statusCode).toBe(200);
    const { url } = res.json();
    expect(url.startsWith(`${PUBLIC_URL}/api/sandbox/checkout/bs_`)).toBe(true);
    const page = await t.app.inject({ method: 'GET', url: pathOf(url) });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Pay $20.00');
    expect(page.body).toContain('<form method="post">');
    // The page's form may be redirected on to the returnTo origin (CSP form-action), nowhere else.
    expect(page.headers['content-security-policy']).toMatch(/form-action 'self' https:\/\/app\.example\.com(;|$)/);
    const paid = await t.app.inject({
      method: 'POST',
      url: pathOf(url),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(returnTo);
    expect((await get('/api/credits', user)).json()).toEqual({ amount: 20, currency: 'usd' });
    expect((await t.app.inject({ method: 'GET', url: pathOf(url) })).body).toContain('This checkout is complete');
  });

  it('amount: 5 to 1000 dollars in whole cents', async () => {
    const user = await createVerifiedUser(t);
    for (const bad of ['4.99', '1000.01', '12.345', 'abc'])
      expect((await post(`/api/credits/add?amount=${bad}`, user)).statusCode).toBe(400);
    const ok = await post('/api/credits/add?amount=12.34', user);
    expect((await t.app.inject({ method: 'GET', url: pathOf(ok.json().url) })).body).toContain('Pay $12.34');
  });

  it('returnTo must be on an allowed origin', async () => {
    const user = await createVerifiedUser(t);
    for (const bad of [
      'https://evil.example.net/x',
      'javascript:alert(1)',
      '/relative',
      'https://user:pw@app.example.com/',
    ]) {
      const res = await post(`/api/credits/add?returnTo=${encodeURIComponent(bad)}`, user);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_return_url');
    }
  });

  it('reads need a valid credential; writes need a verified phone', async () => {
    const unverified = await registerUser(t);
    expect((await t.app.inject({ method: 'GET', url: '/api/credits' })).statusCode).toBe(401);
    expect((await get('/api/credits', unverified)).statusCode).toBe(200);
    expect((await get('/api/billing/state', unverified)).statusCode).toBe(200);
    expect((await get('/api/pricing/voice-countries', unverified)).statusCode).toBe(200);
    for (const res of [
      await post('/api/credits/add', unverified),
      await post('/api/billing/plan', unverified, { plan: 'starter' }),
      await get('/api/billing/portal', unverified),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('phone_not_verified');
    }
  });
});

describe('Idempotency-Key on POST /api/credits/add and /api/billing/plan', () => {
  const sessions = (userId: string) =>
    t.database.db.selectFrom('billing_sessions').select('id').where('user_id', '=', userId).execute();

  it('a retry with the same key replays the first answer and opens no second checkout', async () => {
    const user = await createVerifiedUser(t);
    const first = await post('/api/credits/add?amount=20', user, undefined, { 'idempotency-key': 'topup-1' });
    const again = await post('/api/credits/add?amount=20', user, undefined, { 'idempotency-key': 'topup-1' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await sessions(user.id)).toHaveLength(1);
    const plan1 = await post('/api/billing/plan', user, { plan: 'growth' }, { 'idempotency-key': 'plan-1' });
    const plan2 = await post('/api/billing/plan', user, { plan: 'growth' }, { 'idempotency-key': 'plan-1' });
    expect(plan2.json()).toEqual(plan1.json());
    expect(await sessions(user.id)).toHaveLength(2);
  });

  it('the same key with a different request is 422', async () => {
    const user = await createVerifiedUser(t);
    await post('/api/credits/add?amount=20', user, undefined, { 'idempotency-key': 'k' });
    const other = await post('/api/credits/add?amount=30', user, undefined, { 'idempotency-key': 'k' });
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_mismatch');
    await post('/api/billing/plan', user, { plan: 'starter' }, { 'idempotency-key': 'p' });
    const otherPlan = await post('/api/billing/plan', user, { plan: 'scale' }, { 'idempotency-key': 'p' });
    expect(otherPlan.statusCode).toBe(422);
  });

  it('a retry while the first is still running is 409', async () => {
    const user = await createVerifiedUser(t);
    let open!: () => void;
    payments.gate = new Promise((resolve) => (open = resolve));
    try {
      const first = post('/api/credits/add?amount=50', user, undefined, { 'idempotency-key': 'slow' });
      // Wait until the first request holds the key (its session row exists once it reaches the provider).
      while ((await sessions(user.id)).length === 0) await new Promise((r) => setTimeout(r, 5));
      const retry = await post('/api/credits/add?amount=50', user, undefined, { 'idempotency-key': 'slow' });
      expect(retry.statusCode).toBe(409);
      expect(retry.json().code).toBe('idempotency_in_progress');
      open();
      expect((await first).statusCode).toBe(200);
    } finally {
      payments.gate = null;
      open?.();
    }
    expect(await sessions(user.id)).toHaveLength(1);
  });
});

describe('plans', () => {
  it('plan → active with card; upgrade → the same subscription at the new price; no second subscription', async () => {
    const user = await createVerifiedUser(t);
    const before = (await get('/api/billing/state', user)).json();
    expect(before).toMatchObject({ plan: null, hasCard: false, balance: { amount: 0, currency: 'usd' } });
    expect(before.usage).toEqual({
      seconds_inbound: 0,
      seconds_outbound: 0,
      calls_inbound: 0,
      calls_outbound: 0,
      leads: 0,
    });

    const checkout = await post('/api/billing/plan', user, { plan: 'starter' });
    expect(checkout.statusCode).toBe(200);
    const page = await t.app.inject({ method: 'GET', url: pathOf(checkout.json().url) });
    expect(page.body).toContain('Subscribe for $29.00/month');
    await t.app.inject({ method: 'POST', url: pathOf(checkout.json().url) });
    const active = (await get('/api/billing/state', user)).json();
    expect(active).toMatchObject({ plan: { key: 'starter', priceUsd: 29, status: 'active' }, hasCard: true });

    expect((await post('/api/billing/plan', user, { plan: 'growth' })).statusCode).toBe(409);
    expect((await post('/api/billing/plan', user, { plan: 'starter', mode: 'upgrade' })).statusCode).toBe(409);
    const [sub] = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();

    const upgrade = await post('/api/billing/plan', user, { plan: 'growth', mode: 'upgrade' });
    expect(upgrade.statusCode).toBe(200);
    const confirm = await t.app.inject({ method: 'GET', url: pathOf(upgrade.json().url) });
    expect(confirm.body).toContain('Change plan to Growth');
    expect((await get('/api/billing/state', user)).json().plan.key).toBe('starter'); // not before confirming
    await t.app.inject({ method: 'POST', url: pathOf(upgrade.json().url) });
    expect((await get('/api/billing/state', user)).json().plan).toMatchObject({ key: 'growth', priceUsd: 99 });
    const rows = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: sub.id,
      provider_subscription_id: sub.provider_subscription_id,
      plan_key: 'growth',
      monthly_cents: 9900,
    });
  });

  it('an unknown plan or mode is 400', async () => {
    const user = await createVerifiedUser(t);
    expect((await post('/api/billing/plan', user, { plan: 'platinum' })).statusCode).toBe(400);
    expect((await post('/api/billing/plan', user, { plan: 'growth', mode: 'downgrade' })).statusCode).toBe(400);
  });
});

describe('portal and pricing', () => {
  it('the sandbox portal shows plan, card, balance and ledger', async () => {
    const user = await createVerifiedUser(t);
    const topUp = await post('/api/credits/add?amount=15', user);
    await t.app.inject({ method: 'POST', url: pathOf(topUp.json().url) });
    const res = await get(
      `/api/billing/portal?returnTo=${encodeURIComponent('https://app.example.com/account')}`,
      user,
    );
    expect(res.statusCode).toBe(200);
    const page = await t.app.inject({ method: 'GET', url: pathOf(res.json().url) });
    expect(page.body).toContain('visa ending 4242');
    expect(page.body).toContain('Balance: $15.00');
    expect(page.body).toContain('topup');
    expect(page.body).toContain('href="https://app.example.com/account"');
    // A portal page is not a checkout: it cannot be "paid".
    expect(
      (await t.app.inject({ method: 'POST', url: pathOf(res.json().url).replace('portal', 'checkout') })).statusCode,
    ).toBe(404);
    // While the sandbox is active, Stripe's webhook endpoint does not accept events.
    const hook = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks/stripe',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' },
      payload: '{}',
    });
    expect(hook.statusCode).toBe(404);
    expect(hook.json().code).toBe('not_found');
  });

  it("the sandbox portal cancels the plan and removes the card, as Stripe's portal does", async () => {
    const user = await createVerifiedUser(t);
    const checkout = await post('/api/billing/plan', user, { plan: 'scale' });
    await t.app.inject({ method: 'POST', url: pathOf(checkout.json().url) });
    const portal = pathOf((await get('/api/billing/portal', user)).json().url);
    const page = (await t.app.inject({ method: 'GET', url: portal })).body;
    expect(page).toContain(`action="${portal}/cancel-plan"`);
    expect(page).toContain(`action="${portal}/remove-card"`);

    const removed = await t.app.inject({ method: 'POST', url: `${portal}/remove-card` });
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(portal);
    expect((await get('/api/billing/state', user)).json().hasCard).toBe(false);
    expect((await t.app.inject({ method: 'POST', url: `${portal}/remove-card` })).statusCode).toBe(409);

    expect((await t.app.inject({ method: 'POST', url: `${portal}/cancel-plan` })).statusCode).toBe(303);
    expect((await get('/api/billing/state', user)).json().plan).toBeNull();
    expect((await t.app.inject({ method: 'POST', url: `${portal}/cancel-plan` })).statusCode).toBe(409);
    expect((await t.app.inject({ method: 'POST', url: `${portal}/delete-account` })).statusCode).toBe(400);
    const [row] = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(row.status).toBe('canceled');
    // A new plan may be chosen after cancelling.
    expect((await post('/api/billing/plan', user, { plan: 'starter' })).statusCode).toBe(200);
  });

  it('voice pricing: at least 30 countries, per-minute rates, cacheable for an hour', async () => {
    const user = await registerUser(t);
    const res = await get('/api/pricing/voice-countries', user);
    expect(res.headers['cache-control']).toBe('public, s-maxage=3600');
    const rates = res.json();
    expect(rates.length).toBeGreaterThanOrEqual(30);
    expect(rates).toContainEqual({
      country: 'US',
      name: 'United States',
      inboundPerMinute: 0.0085,
      outboundPerMinute: 0.014,
      currency: 'usd',
    });
    for (const r of rates) expect(r.outboundPerMinute).toBeGreaterThan(0);
  });
});

describe('sandbox pages in production', () => {
  it('are never mounted, even with the sandbox payment provider allowed', async () => {
    const prod = await createTestApp({ config: { env: 'production', allowSandbox: true } });
    try {
      expect(prod.services.providers.payments.sandbox).toBe(true);
      const res = await prod.app.inject({ method: 'GET', url: '/api/sandbox/checkout/bs_x' });
      expect(res.json().code).toBe('route_not_found');
    } finally {
      await prod.close();
    }
  });
});

describe('payment pages per user', () => {
  it('are rate limited (RATE_LIMIT_BILLING_SESSIONS_PER_USER): 429 with Retry-After, other users unaffected', async () => {
    const limited = await createTestApp({
      config: { rateLimits: { ...relaxedIpLimits, billingSessionsPerUser: { limit: 2, windowMs: 3600_000 } } },
    });
    try {
      const [user, other] = [await createVerifiedUser(limited), await createVerifiedUser(limited)];
      const open = (u: TestUser, url: string) =>
        limited.app.inject({ method: url.includes('portal') ? 'GET' : 'POST', url, headers: bearer(u.token) });
      expect((await open(user, '/api/credits/add')).statusCode).toBe(200);
      expect((await open(user, '/api/billing/portal')).statusCode).toBe(200);
      const third = await open(user, '/api/credits/add');
      expect(third.statusCode).toBe(429);
      expect(third.json().code).toBe('rate_limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect((await open(other, '/api/credits/add')).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
