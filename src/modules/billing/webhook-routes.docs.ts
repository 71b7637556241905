// What the OpenAPI document says of the routes in webhook-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  receiveStripeWebhook: {
    summary: 'Stripe webhook endpoint',
    description:
      'Point a Stripe webhook endpoint here (events: checkout.session.completed, checkout.session.async_payment_succeeded, invoice.paid, customer.subscription.created, .updated, .deleted, payment_method.detached, refund.created, refund.updated) and set its signing secret as STRIPE_WEBHOOK_SECRET. `Stripe-Signature` is verified on the raw body with a 300-second tolerance; each event id is applied once. 404 while the sandbox payment provider is active.',
  },
});

export const examples = {
  stripeEvent: {
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
  receiveStripeWebhook: { received: true, outcome: 'handled' as const },
};
