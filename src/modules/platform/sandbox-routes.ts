// GET /api/sandbox/outbox: what the sandbox providers would have sent. Mounted
// only while a sandbox provider is active and never in production (not even
// with ALLOW_SANDBOX=1): it answers without credentials and holds secrets.
import { Type } from 'typebox';
import { ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { anySandbox } from '../../providers/index.js';
import type { Providers } from '../../providers/index.js';
import type { Outbox } from '../../providers/outbox.js';
import { docs, examples } from './sandbox-routes.docs.js';

const OutboxItem = Type.Object({
  id: Type.String(),
  channel: Type.Union([Type.Literal('sms'), Type.Literal('email')]),
  to: Type.String(),
  subject: Type.Optional(Type.String()),
  body: Type.String(),
  data: Type.Object(
    {
      code: Type.Optional(
        Type.String({
          description:
            'The 6-digit code of a phone verification SMS, or of a temporary-session SMS (`purpose: temporary-session`)',
        }),
      ),
      purpose: Type.Optional(
        Type.Literal('temporary-session', { description: 'On the SMS of PUT /api/session/temporary' }),
      ),
      token: Type.Optional(
        Type.String({ description: 'The password reset token (POST /api/auth/reset-password/submit)' }),
      ),
      url: Type.Optional(
        Type.String({
          description:
            'The link of a password reset email, or of the notice sent when someone signs up with an email that has an account',
        }),
      ),
      reason: Type.Optional(Type.Literal('sign_up_existing_email', { description: 'On that notice' })),
      from: Type.Optional(
        Type.String({
          description:
            'The sending number of an SMS sent through the sandbox telephony provider (POST /api/sms/messages)',
        }),
      ),
      messageSid: Type.Optional(Type.String({ description: "Its sandbox message id (as Twilio's MessageSid)" })),
      sessionId: Type.Optional(
        Type.String({ description: "The call session of a temporary test call's summary email" }),
      ),
      status: Type.Optional(Type.String({ description: "That call's final status" })),
      durationSeconds: Type.Optional(Type.Number({ description: "That call's duration" })),
    },
    {
      additionalProperties: true,
      description:
        'The machine-readable part of the message: which fields depends on the message, as described for each',
    },
  ),
  createdAt: Type.String({ format: 'date-time' }),
});

/** An unencoded "+" in a query string arrives as a space; emails compare lower-case. */
function normalizeRecipient(to: string | undefined): string | null {
  const value = (to ?? '').replace(/^ (?=\d)/, '+').trim();
  if (!value) return null;
  return value.includes('@') ? value.toLowerCase() : value;
}

/** What the sandbox outbox route touches: the providers (is any a sandbox?), the outbox, and whether this is production. */
export interface SandboxRouteDeps {
  providers: Providers;
  outbox: Outbox;
  production: boolean;
}

export function sandboxRoutes(app: App, deps: SandboxRouteDeps) {
  if (!anySandbox(deps.providers) || deps.production) return;
  app.get(
    '/api/sandbox/outbox',
    {
      schema: {
        tags: ['sandbox'],
        ...docs.listSandboxOutbox,
        querystring: Type.Object({
          to: Type.Optional(Type.String({ description: 'Only messages to this phone number or email address' })),
          limit: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 200,
              default: 50,
              description: 'At most this many messages (default 50)',
            }),
          ),
        }),
        response: {
          200: ok(Type.Array(OutboxItem), 'The messages, newest first', examples.listSandboxOutbox),
        },
      },
    },
    async (request) => deps.outbox.list(normalizeRecipient(request.query.to), request.query.limit),
  );
}
