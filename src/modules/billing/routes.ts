// Billing, credits and pricing (spec 4.18). Reads (credits, state, pricing)
// need general authentication; writes, and the portal where billing is
// changed, a verified phone (DESIGN.md "Decisions").
import { Type } from 'typebox';
import { errorResponses, errorWith, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import type { PaymentEventHandler } from './payment-events.js';
import type { SandboxBilling } from './sandbox-service.js';
import type { BillingService } from './service.js';
import { billingSandboxRoutes } from './sandbox-routes.js';
import { billingWebhookRoutes } from './webhook-routes.js';
import { TOPUP_MAX_USD, TOPUP_MIN_USD } from './service.js';
import { docs, examples } from './routes.docs.js';

const Money = Type.Object(
  {
    amount: Type.Number({ description: 'In currency units (12.5 is $12.50)' }),
    currency: Type.Literal('usd', { description: 'Lower-case ISO 4217' }),
  },
  { description: 'An amount of money' },
);

const Url = Type.Object(
  { url: Type.String({ format: 'uri', description: 'The page to send the customer to' }) },
  { description: 'The payment page' },
);

const usageOf = (description?: string) =>
  Type.Object(
    {
      seconds_inbound: Type.Integer(),
      seconds_outbound: Type.Integer(),
      calls_inbound: Type.Integer(),
      calls_outbound: Type.Integer(),
      leads: Type.Integer(),
    },
    description ? { description } : {},
  );
const Usage = usageOf();

const BillingState = Type.Object(
  {
    plan: Type.Union([
      Type.Object({
        key: Type.String(),
        name: Type.String(),
        priceUsd: Type.Number({ description: 'Per month' }),
        status: Type.String({ description: "The subscription's status: active, trialing or past_due" }),
        included: Usage,
      }),
      Type.Null(),
    ]),
    usage: usageOf("This period's usage, each number clamped to the plan's included quantity (0 without a plan)"),
    usageRaw: usageOf("This period's usage, unclamped"),
    hasCard: Type.Boolean({ description: 'A default payment method is on file' }),
    balance: Money,
    period: Type.Object(
      { start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time' }) },
      { description: "The billing period usage counts in: the subscription's, else the calendar month (UTC)" },
    ),
  },
  { description: 'Billing state (spec 2.17)' },
);

const VoiceRate = Type.Object({
  country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
  name: Type.String(),
  inboundPerMinute: Type.Number({ description: 'US dollars per minute received on a local number' }),
  outboundPerMinute: Type.Number({ description: 'US dollars per minute called to this country' }),
  currency: Type.Literal('usd'),
});

const ReturnTo = Type.String({
  maxLength: 2048,
  description: 'Where the payment page sends the customer afterwards; its origin must be in RETURN_URL_ORIGINS',
});

/** What the billing routes touch: the billing service, the payment provider's events, the sandbox pages (null without the sandbox), and whether this is production. */
export interface BillingRouteDeps {
  billing: BillingService;
  events: PaymentEventHandler;
  payments: PaymentsProvider;
  sandbox: SandboxBilling | null;
  production: boolean;
}

export function billingRoutes(app: App, deps: BillingRouteDeps) {
  const { billing } = deps;

  app.get(
    '/api/credits',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['billing'],
        ...docs.getCredits,
        response: { 200: ok(Money, 'The prepaid balance', examples.getCredits) },
      },
    },
    async (request) => billing.credits(request.auth!.userId),
  );

  app.post(
    '/api/credits/add',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['billing'],
        ...docs.addCredits,
        querystring: Type.Object({
          returnTo: Type.Optional(ReturnTo),
          amount: Type.Optional(
            Type.Number({
              minimum: TOPUP_MIN_USD,
              maximum: TOPUP_MAX_USD,
              description: 'US dollars in whole cents; default CREDITS_TOPUP_USD (20)',
            }),
          ),
        }),
        response: {
          200: ok(Url, 'The checkout page to pay the top-up on', examples.checkout),
          ...errorResponses('invalid_input', 'invalid_return_url', 'rate_limited', 'provider_error'),
        },
      },
    },
    async (request) =>
      billing.addCredits(request.auth!.userId, { amountUsd: request.query.amount, returnTo: request.query.returnTo }),
  );

  app.get(
    '/api/billing/state',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['billing'],
        ...docs.getBillingState,
        response: {
          200: ok(
            BillingState,
            "The caller's plan, usage this period, card on file and balance",
            examples.getBillingState,
          ),
        },
      },
    },
    async (request) => billing.state(request.auth!.userId),
  );

  app.post(
    '/api/billing/plan',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['billing'],
        ...docs.choosePlan,
        querystring: Type.Object({ returnTo: Type.Optional(ReturnTo) }),
        body: Type.Object(
          {
            plan: Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'A plan key: starter, growth or scale (or those of PLANS_FILE)',
            }),
            mode: Type.Optional(Type.Literal('upgrade')),
          },
          { examples: examples.choosePlanBody },
        ),
        response: {
          200: ok(Url, 'The subscription checkout, or the page confirming the plan change', examples.checkout),
          ...errorResponses(
            'invalid_input',
            'invalid_return_url',
            errorWith('conflict', {
              url: {
                schema: {
                  type: 'string',
                  format: 'uri',
                  description: 'The checkout of another plan still open: complete it there',
                },
                example: 'https://checkout.stripe.com/c/pay/cs_test_plan',
              },
              plan: { schema: { type: 'string', description: 'The plan of that open checkout' }, example: 'starter' },
              expiresAt: {
                schema: {
                  type: 'string',
                  format: 'date-time',
                  description: 'When that checkout expires (another plan may be chosen then)',
                },
                example: '2026-11-26T11:00:00.000Z',
              },
            }),
            'rate_limited',
            'provider_error',
          ),
        },
      },
    },
    async (request) => billing.choosePlan(request.auth!.userId, { ...request.body, returnTo: request.query.returnTo }),
  );

  app.get(
    '/api/billing/portal',
    {
      // The portal changes billing (cancel, card): a write, so a verified phone (DESIGN.md lists the reads).
      config: { auth: 'verified' },
      schema: {
        tags: ['billing'],
        ...docs.openBillingPortal,
        querystring: Type.Object({ returnTo: Type.Optional(ReturnTo) }),
        response: {
          200: ok(Url, 'The customer portal session', examples.openBillingPortal),
          ...errorResponses('invalid_return_url', 'rate_limited', 'provider_error'),
        },
      },
    },
    async (request) => billing.portal(request.auth!.userId, request.query.returnTo),
  );

  app.get(
    '/api/pricing/voice-countries',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['billing'],
        ...docs.listVoicePricing,
        response: {
          200: ok(Type.Array(VoiceRate), 'Voice rates per country', examples.listVoicePricing),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, s-maxage=3600');
      return billing.voicePricing();
    },
  );

  billingWebhookRoutes(app, deps.events, deps.payments);
  billingSandboxRoutes(app, deps.sandbox, deps.production);
}
