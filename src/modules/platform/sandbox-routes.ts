// GET /api/sandbox/outbox: what the sandbox providers would have sent. Mounted
// only while a sandbox provider is active and never in production.
import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { anySandbox } from '../../providers/index.js';
import type { Services } from '../../services.js';

const OutboxItem = Type.Object({
  id: Type.String(),
  channel: Type.Union([Type.Literal('sms'), Type.Literal('email')]),
  to: Type.String(),
  subject: Type.Optional(Type.String()),
  body: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'Machine-readable part: code, token, url' }),
  createdAt: Type.String({ format: 'date-time' }),
});

/** An unencoded "+" in a query string arrives as a space; emails compare lower-case. */
function normalizeRecipient(to: string | undefined): string | null {
  const value = (to ?? '').replace(/^ (?=\d)/, '+').trim();
  if (!value) return null;
  return value.includes('@') ? value.toLowerCase() : value;
}

export function sandboxRoutes(app: App, services: Services) {
  if (!anySandbox(services.providers) || services.config.env === 'production') return;
  app.get(
    '/api/sandbox/outbox',
    {
      schema: {
        tags: ['sandbox'],
        summary: 'Messages the sandbox SMS and email providers would have sent, newest first',
        querystring: Type.Object({
          to: Type.Optional(Type.String({ description: 'Only messages to this phone number or email address' })),
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
        }),
        response: { 200: Type.Array(OutboxItem) },
      },
    },
    async (request) => services.outbox.list(normalizeRecipient(request.query.to), request.query.limit),
  );
}
