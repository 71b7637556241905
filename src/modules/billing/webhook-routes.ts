// POST /api/webhooks/stripe: Stripe's events in. The signature is checked on
// the raw body before anything else (a bad one is 400 and changes nothing);
// the event is applied once, however often Stripe (or anyone) delivers it.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { BillingServices } from './create-services.js';

export function billingWebhookRoutes(app: App, services: BillingServices) {
  const { events, payments } = services;
  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    // The signature covers the exact bytes Stripe sent: keep them unparsed here.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));

    scope.post(
      '/api/webhooks/stripe',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'receiveStripeWebhook',
          summary: 'Stripe webhook endpoint',
          description:
            'Point a Stripe webhook endpoint here (events: checkout.session.completed, checkout.session.async_payment_succeeded, invoice.paid, customer.subscription.created, .updated, .deleted, payment_method.detached, refund.created, refund.updated) and set its signing secret as STRIPE_WEBHOOK_SECRET. `Stripe-Signature` is verified on the raw body with a 300-second tolerance; each event id is applied once. 404 while the sandbox payment provider is active.',
          headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String()) }),
          response: {
            200: ok(
              Type.Object({ received: Type.Boolean(), outcome: Type.Union([Type.Literal('handled'), Type.Literal('duplicate'), Type.Literal('ignored')]) }),
              'Acknowledged: applied now, applied before (duplicate), or not a billing event (ignored)',
              { received: true, outcome: 'handled' },
            ),
            ...errorResponses('invalid_signature', 'not_found'),
          },
        },
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
