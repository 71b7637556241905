// POST /api/webhooks/stripe: Stripe's events in. The signature is checked on
// the raw body before anything else (a bad one is 400 and changes nothing);
// the event is applied once, however often Stripe (or anyone) delivers it.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import type { PaymentEventHandler } from './payment-events.js';

/** A Stripe event as Stripe sends it (https://docs.stripe.com/api/events/object); the fields read here. */
const StripeEvent = Type.Object(
  {
    id: Type.String({ description: 'The event id (`evt_…`): applied once' }),
    object: Type.Literal('event'),
    type: Type.String({
      description: 'e.g. checkout.session.completed; types not listed above are acknowledged and ignored',
    }),
    created: Type.Integer({ description: 'Unix time' }),
    livemode: Type.Boolean(),
    api_version: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    data: Type.Object(
      {
        object: Type.Object(
          {},
          {
            additionalProperties: true,
            description:
              'The Stripe object the event is about (a checkout session, invoice, subscription, payment method or refund)',
          },
        ),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    examples: [
      {
        id: 'evt_1QdXyZ2eZvKYlo2C0aBcDeFg',
        object: 'event',
        type: 'checkout.session.completed',
        created: 1764151200,
        livemode: false,
        api_version: '2025-10-29.clover',
        data: {
          object: {
            id: 'cs_test_a1b2c3',
            object: 'checkout.session',
            mode: 'payment',
            payment_status: 'paid',
            client_reference_id: '0193a5c2-1b7e-7d4f-9a31-2c5e8f0b7d11',
          },
        },
      },
    ],
  },
);

export function billingWebhookRoutes(app: App, events: PaymentEventHandler, payments: PaymentsProvider) {
  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    // The signature covers the exact bytes Stripe sent: keep them unparsed here.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: 1024 * 1024 },
      (_request, body, done) => done(null, body),
    );

    scope.post(
      '/api/webhooks/stripe',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'receiveStripeWebhook',
          summary: 'Stripe webhook endpoint',
          description:
            'Point a Stripe webhook endpoint here (events: checkout.session.completed, checkout.session.async_payment_succeeded, invoice.paid, customer.subscription.created, .updated, .deleted, payment_method.detached, refund.created, refund.updated) and set its signing secret as STRIPE_WEBHOOK_SECRET. `Stripe-Signature` is verified on the raw body with a 300-second tolerance; each event id is applied once. 404 while the sandbox payment provider is active.',
          headers: Type.Object({
            'stripe-signature': Type.Optional(
              Type.String({ description: "Stripe's signature of the raw body: `t=<unix time>,v1=<hex HMAC-SHA256>`" }),
            ),
          }),
          body: StripeEvent,
          response: {
            200: ok(
              Type.Object({
                received: Type.Boolean(),
                outcome: Type.Union([Type.Literal('handled'), Type.Literal('duplicate'), Type.Literal('ignored')]),
              }),
              'Acknowledged: applied now, applied before (duplicate), or not a billing event (ignored)',
              { received: true, outcome: 'handled' },
            ),
            ...errorResponses('invalid_signature', 'not_found'),
          },
        },
        // The raw bytes are checked against the signature and parsed by Stripe's library; the schema above documents them.
        validatorCompiler: ({ httpPart, schema }) =>
          httpPart === 'body'
            ? () => true
            : scope.validatorCompiler!({ schema, httpPart, method: 'POST', url: '/api/webhooks/stripe' }),
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const event = await payments.parseWebhook(raw, request.headers['stripe-signature']);
        const outcome = await events.handle(event);
        request.log.info({ eventId: event.id, type: event.type, outcome }, 'stripe webhook');
        return { received: true, outcome };
      },
    );
  });
}
