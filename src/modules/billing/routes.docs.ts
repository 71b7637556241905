// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

const checkoutUrl = { url: 'https://checkout.stripe.com/c/pay/cs_test_a1b2c3' };
const usageExample = { seconds_inbound: 120, seconds_outbound: 3000, calls_inbound: 2, calls_outbound: 40, leads: 15 };
const billingStateExample = {
  plan: {
    key: 'starter',
    name: 'Starter',
    priceUsd: 29,
    status: 'active',
    included: { seconds_inbound: 3000, seconds_outbound: 3000, calls_inbound: 100, calls_outbound: 100, leads: 100 },
  },
  usage: { ...usageExample, seconds_outbound: 3000 },
  usageRaw: { ...usageExample, seconds_outbound: 3600 },
  hasCard: true,
  balance: { amount: 20, currency: 'usd' as const },
  period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
};

export const docs = describeRoutes({
  getCredits: {
    summary: 'Prepaid credit balance',
    description:
      "The sum of the caller's credit ledger. May be up to 60 seconds old when it changed on another instance; a change made through this instance shows at once.",
  },
  addCredits: {
    summary: 'Open a checkout to top up the prepaid balance',
    description:
      'Answers `{ url }` of a payment page (Stripe Checkout, or the sandbox page). Paying it credits the balance once, through the payment webhook; the card is kept on file.',
  },
  getBillingState: {
    summary: 'Plan, usage this period, card on file and balance',
    description:
      "Usage counts in the current billing period. `usage` is clamped to the plan's included quantities (spec 2.17); `usageRaw` is not.",
  },
  choosePlan: {
    summary: 'Subscribe to a plan, or change the subscription to another plan',
    description:
      "Without `mode`: a subscription checkout (409 when a plan is already active). One plan checkout is open per user at a time: asking again for the same plan answers the open checkout's `url`; another plan is 409 `conflict` with the open one's `url`, `plan` and `expiresAt` (complete it, or choose again once it expires). With `mode: \"upgrade\"`: a confirmation page that moves the existing subscription to the new plan's price; never a second subscription (409 when there is none). A change takes effect as Stripe prorates it: the period's included quantities are prorated over the plans in force.",
  },
  openBillingPortal: {
    summary: 'Open the customer portal',
    description:
      'Answers `{ url }` of a Stripe Billing Portal session (sandbox: a page showing plan, card, balance and ledger).',
  },
  listVoicePricing: {
    summary: 'Per-country voice rates per minute',
    description:
      'Built in, or from VOICE_PRICING_FILE. Cacheable for an hour (`Cache-Control: public, s-maxage=3600`).',
  },
});

export const examples = {
  checkout: checkoutUrl,
  getBillingState: billingStateExample,
  choosePlanBody: [{ plan: 'starter' }, { plan: 'growth', mode: 'upgrade' }],
  getCredits: { amount: 20, currency: 'usd' as const },
  openBillingPortal: {
    url: 'https://billing.stripe.com/p/session/test_YWNjdF8xUzJ4',
  },
  listVoicePricing: [
    {
      country: 'US',
      name: 'United States',
      inboundPerMinute: 0.0085,
      outboundPerMinute: 0.014,
      currency: 'usd' as const,
    },
    {
      country: 'GB',
      name: 'United Kingdom',
      inboundPerMinute: 0.01,
      outboundPerMinute: 0.024,
      currency: 'usd' as const,
    },
  ],
};
