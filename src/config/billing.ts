// Payments, prices and the limits a balance pays for (docs/decisions/billing.md).
import { isAbsolute, resolve } from 'node:path';
import { integer, optional, section, urlWithDefault, usdAmount } from './declare.js';
import type { BillingSettings } from './types.js';

/** A data file's path, relative to the working directory unless absolute. */
export const dataFilePath = (raw: string | null, cwd: string) =>
  raw === null ? null : isAbsolute(raw) ? raw : resolve(cwd, raw);

const v = {
  stripeKey: optional(
    'STRIPE_SECRET_KEY',
    'Real payments through Stripe (`sk_…` or `rk_…`); otherwise the sandbox payment pages under `/api/sandbox/…`',
  ),
  stripeWebhookSecret: optional(
    'STRIPE_WEBHOOK_SECRET',
    'Signing secret (`whsec_…`) of the endpoint `PUBLIC_URL/api/webhooks/stripe`; required with `STRIPE_SECRET_KEY`',
  ),
  stripeApiBase: urlWithDefault(
    'STRIPE_API_BASE',
    'https://api.stripe.com',
    ['http:', 'https:'],
    'Stripe API origin (tests point it at a local Stripe-speaking server)',
  ),
  plansFile: optional(
    'PLANS_FILE',
    'JSON file of plans replacing the built-in ones (see [billing decisions](decisions/billing.md))',
    'built-in `starter`, `growth`, `scale`',
  ),
  voicePricingFile: optional(
    'VOICE_PRICING_FILE',
    'JSON file of per-country voice rates replacing the built-in table',
    'built-in table (36 countries)',
  ),
  topupUsd: optional(
    'CREDITS_TOPUP_USD',
    'Default amount of `POST /api/credits/add` in US dollars (5 to 1,000)',
    '`20`',
  ),
  smsSegmentPrice: usdAmount(
    'SMS_PRICE_USD',
    '0.0079',
    4,
    10,
    'Price of one SMS segment in US dollars (0.0001 to 10, at most four decimals)',
  ),
  callConcurrencyPerUser: integer(
    'CALL_CONCURRENCY_PER_USER',
    5,
    1,
    10_000,
    "Calls under way at once per account (1 to 10,000); a plan's `callConcurrency` may raise it; more → 429 `concurrency_limit`",
  ),
  callMaxSeconds: integer(
    'CALL_MAX_SECONDS',
    3600,
    60,
    7200,
    'The longest call (60 to 7,200 s); its hold covers this when the balance allows',
  ),
};

export const billingSection = section<{ billing: BillingSettings }>('Billing', v, (read, { cwd, problem }) => {
  const stripeKey = read(v.stripeKey);
  const stripeWebhookSecret = read(v.stripeWebhookSecret);
  let stripe: BillingSettings['stripe'] = null;
  if (stripeKey) {
    if (!/^(sk|rk)_(test|live)_/.test(stripeKey))
      problem('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_… or rk_…)');
    if (!stripeWebhookSecret) problem('STRIPE_WEBHOOK_SECRET (whsec_…) is required with STRIPE_SECRET_KEY');
    const apiBase = read(v.stripeApiBase).replace(/\/$/, '');
    stripe = { secretKey: stripeKey, webhookSecret: stripeWebhookSecret ?? '', apiBase };
  }
  const topupRaw = read(v.topupUsd);
  const topupDefaultUsd = topupRaw === null ? 20 : Number(topupRaw);
  if (!(topupDefaultUsd >= 5 && topupDefaultUsd <= 1000) || Math.round(topupDefaultUsd * 100) !== topupDefaultUsd * 100)
    problem(`CREDITS_TOPUP_USD must be 5 to 1000 US dollars in whole cents (got "${topupRaw}")`);
  return {
    billing: {
      stripe,
      plansFile: dataFilePath(read(v.plansFile), cwd),
      voicePricingFile: dataFilePath(read(v.voicePricingFile), cwd),
      topupDefaultUsd,
      balanceCacheMs: 60_000,
      callConcurrencyPerUser: read(v.callConcurrencyPerUser),
      callMaxSeconds: read(v.callMaxSeconds),
      smsSegmentPrice: read(v.smsSegmentPrice),
    },
  };
});
