// What the OpenAPI document says of the routes in sandbox-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  sandboxCheckoutPage: {
    summary: 'Sandbox checkout page',
    description:
      'The page a top-up, card or plan `{ url }` points at while the sandbox payment provider is active: what is bought and a button that POSTs to the same URL.',
  },
  sandboxCheckoutComplete: {
    summary: 'Complete a sandbox checkout as if the customer paid',
    description:
      'Completes the session through the same handler as the Stripe webhook (balance credited, card on file, plan active), then redirects (303) to the returnTo URL given when the session was opened. Submitting twice changes nothing more.',
  },
  sandboxPortalAction: {
    summary: 'Cancel the plan or remove the card in the sandbox portal',
    description:
      "What the Stripe Billing Portal lets a customer do: `cancel-plan` ends the plan subscription, `remove-card` forgets the card on file. Reported through the same handler as Stripe's `customer.subscription.deleted` and `payment_method.detached` webhooks; then redirects (303) back to the portal page.",
  },
  sandboxPortalPage: {
    summary: 'Sandbox customer portal',
    description:
      'The page GET /api/billing/portal points at while the sandbox payment provider is active: plan, card on file, balance and recent ledger entries.',
  },
});
