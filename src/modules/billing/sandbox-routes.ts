// Sandbox payment pages: what Stripe Checkout and the Billing Portal would
// show, served by the service while the sandbox payment provider is active
// (never in production). Submitting a checkout page completes it through the
// same handler as Stripe's webhook. The session id in the URL is the
// capability, as a Stripe Checkout URL is.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { SandboxPaymentsProvider } from '../../providers/payments/sandbox.js';
import { formatUsd } from './ledger.js';
import { sandboxCheckoutPage, sandboxDonePage, sandboxPortalPage } from './sandbox-pages.js';
import type { BillingServices } from './create-services.js';

const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const Html = Type.String({ description: 'An HTML page', example: '<!doctype html><html>…</html>' });

export function billingSandboxRoutes(app: App, services: BillingServices, production: boolean) {
  const payments = services.payments;
  if (!(payments instanceof SandboxPaymentsProvider) || production) return;
  const { billing } = services;

  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    // The page's form posts an empty urlencoded body; nothing in it is read.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined));

    scope.get(
      '/api/sandbox/checkout/:id',
      {
        schema: {
          tags: ['sandbox'],
          operationId: 'sandboxCheckoutPage',
          summary: 'Sandbox checkout page',
          description:
            'The page a top-up, card or plan `{ url }` points at while the sandbox payment provider is active: what is bought and a button that POSTs to the same URL.',
          params: SessionParams,
          produces: ['text/html'],
          response: { 200: Html, ...errors(404) },
        },
      },
      async (request, reply) => {
        const { session, plan, expired } = await billing.sandboxSession(request.params.id, 'checkout');
        return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(sandboxCheckoutPage({ session, plan, expired }));
      },
    );

    scope.post(
      '/api/sandbox/checkout/:id',
      {
        schema: {
          tags: ['sandbox'],
          operationId: 'sandboxCheckoutComplete',
          summary: 'Complete a sandbox checkout as if the customer paid',
          description:
            'Completes the session through the same handler as the Stripe webhook (balance credited, card on file, plan active), then redirects (303) to the returnTo URL given when the session was opened. Submitting twice changes nothing more.',
          params: SessionParams,
          produces: ['text/html'],
          response: { 200: Html, 303: Type.Null({ description: 'Redirect to the returnTo URL' }), ...errors(404, 409) },
        },
      },
      async (request, reply) => {
        const session = await billing.completeSandboxSession(request.params.id, (s, now) => payments.completion(s, now));
        if (session.return_to) return reply.redirect(session.return_to, 303);
        const what = session.purpose === 'topup' ? `${formatUsd(Number(session.amount_cents))} added to your balance` : 'Done';
        return reply.type('text/html; charset=utf-8').send(sandboxDonePage(what));
      },
    );

    scope.get(
      '/api/sandbox/portal/:id',
      {
        schema: {
          tags: ['sandbox'],
          operationId: 'sandboxPortalPage',
          summary: 'Sandbox customer portal',
          description: 'The page GET /api/billing/portal points at while the sandbox payment provider is active: plan, card on file, balance and recent ledger entries.',
          params: SessionParams,
          produces: ['text/html'],
          response: { 200: Html, ...errors(404) },
        },
      },
      async (request, reply) => {
        const { session } = await billing.sandboxSession(request.params.id, 'portal');
        const portal = await billing.sandboxPortal(session.user_id);
        return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(sandboxPortalPage({ ...portal, returnTo: session.return_to }));
      },
    );
  });
}
