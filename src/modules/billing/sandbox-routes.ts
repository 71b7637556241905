// Sandbox payment pages: what Stripe Checkout and the Billing Portal would
// show, served by the service while the sandbox payment provider is active
// (never in production). Submitting a checkout page completes it through the
// same handler as Stripe's webhook. The session id in the URL is the
// capability, as a Stripe Checkout URL is.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses } from '../../http/schemas.js';
import type { App, FastifyReply } from '../../http/types.js';
import { formatUsd } from './ledger.js';
import { sandboxCheckoutPage, sandboxDonePage, sandboxPortalPage } from './sandbox-pages.js';
import type { SandboxBilling } from './sandbox-service.js';
import { docs } from './sandbox-routes.docs.js';

const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String({ example: '<!doctype html><html>…</html>' }) } },
});

/**
 * Browsers apply the page's CSP `form-action` to where a submitted form is
 * redirected, and the service's policy allows only itself: a checkout page may
 * also send the customer on to its returnTo origin (already checked against
 * RETURN_URL_ORIGINS when the session was opened).
 */
function allowFormRedirectTo(reply: FastifyReply, returnTo: string | null): void {
  const policy = reply.getHeader('content-security-policy');
  if (!returnTo || typeof policy !== 'string') return;
  const origin = new URL(returnTo).origin;
  reply.header(
    'content-security-policy',
    policy.replace(/form-action ([^;]*)/, (_all, sources: string) => `form-action ${sources} ${origin}`),
  );
}

export function billingSandboxRoutes(app: App, sandbox: SandboxBilling | null, production: boolean) {
  if (!sandbox || production) return;

  app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    // The page's form posts an empty urlencoded body; nothing in it is read.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, _body, done) =>
      done(null, undefined),
    );

    scope.get(
      '/api/sandbox/checkout/:id',
      {
        schema: {
          tags: ['sandbox'],
          ...docs.sandboxCheckoutPage,
          params: SessionParams,
          response: { 200: html('The checkout page'), ...errorResponses('not_found') },
        },
      },
      async (request, reply) => {
        const { session, plan, expired } = await sandbox.session(request.params.id, 'checkout');
        allowFormRedirectTo(reply, session.return_to);
        return reply
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(sandboxCheckoutPage({ session, plan, expired }));
      },
    );

    scope.post(
      '/api/sandbox/checkout/:id',
      {
        schema: {
          tags: ['sandbox'],
          ...docs.sandboxCheckoutComplete,
          params: SessionParams,
          response: {
            200: html('Payment complete (when no returnTo was given)'),
            303: Type.Null({ description: 'Completed: redirect to the returnTo URL' }),
            ...errorResponses('not_found', 'conflict'),
          },
        },
      },
      async (request, reply) => {
        const session = await sandbox.complete(request.params.id);
        if (session.return_to) return reply.redirect(session.return_to, 303);
        const what =
          session.purpose === 'topup' ? `${formatUsd(Number(session.amount_cents))} added to your balance` : 'Done';
        return reply.type('text/html; charset=utf-8').send(sandboxDonePage(what));
      },
    );

    scope.post(
      '/api/sandbox/portal/:id/:action',
      {
        schema: {
          tags: ['sandbox'],
          ...docs.sandboxPortalAction,
          params: Type.Object({
            id: SessionParams.properties.id,
            action: Type.Union([Type.Literal('cancel-plan'), Type.Literal('remove-card')]),
          }),
          response: {
            303: Type.Null({ description: 'Done: back to the portal page' }),
            ...errorResponses('not_found', 'conflict'),
          },
        },
      },
      async (request, reply) => {
        await sandbox.portalAction(request.params.id, request.params.action);
        return reply.redirect(`/api/sandbox/portal/${encodeURIComponent(request.params.id)}`, 303);
      },
    );

    scope.get(
      '/api/sandbox/portal/:id',
      {
        schema: {
          tags: ['sandbox'],
          ...docs.sandboxPortalPage,
          params: SessionParams,
          response: { 200: html('The portal page'), ...errorResponses('not_found') },
        },
      },
      async (request, reply) => {
        const { session } = await sandbox.session(request.params.id, 'portal');
        const portal = await sandbox.portal(session.user_id);
        return reply
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(
            sandboxPortalPage({
              ...portal,
              returnTo: session.return_to,
              self: `/api/sandbox/portal/${encodeURIComponent(session.id)}`,
            }),
          );
      },
    );
  });
}
