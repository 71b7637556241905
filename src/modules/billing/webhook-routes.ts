// POST /api/webhooks/stripe: Stripe's events in. The signature is checked on
// the raw body before anything else (a bad one is 400 and changes nothing);
// the event is applied once, however often Stripe (or anyone) delivers it.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import type { PaymentEventHandler } from './payment-events.js';
import { docs, examples } from './webhook-routes.docs.js';

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
    examples: [examples.stripeEvent],
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
          ...docs.receiveStripeWebhook,
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
              examples.receiveStripeWebhook,
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
