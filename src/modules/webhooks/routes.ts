// The caller's webhook signing secret (DESIGN "Calls"). Deliveries themselves
// are sent by the worker, which runs while the app is ready.
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

const WebhookSecret = Type.Object(
  {
    secret: Type.String({ description: 'Standard Webhooks secret (`whsec_<base64>`): verify `webhook-signature` with it' }),
    createdAt: Type.String({ format: 'date-time', description: 'When this secret was made (first use or last rotation)' }),
    previousSecretValidUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'After a rotation: until then deliveries also carry a signature made with the previous secret',
    }),
  },
  {
    description: 'The signing secret',
    examples: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Q8GxZLzoPk=', createdAt: '2026-11-23T10:00:00.000Z', previousSecretValidUntil: null }],
  },
);

export function webhookRoutes(app: App, services: Services) {
  const { webhooks, webhookWorker } = services.webhooks;
  webhookWorker.reportErrorsTo(app.log);
  app.addHook('onReady', async () => webhookWorker.start());
  app.addHook('onClose', async () => webhookWorker.stop());

  const description =
    'Call progress sent to a session\'s `webhook` URL is signed as Standard Webhooks specifies: headers `webhook-id` (the message id, the same on every retry: deduplicate on it), `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64 part of this secret). Body: `{ "type": "call_status", "timestamp", "data": <the call_status event payload> }`. Any 2xx answer ends a delivery; anything else, or no answer within 10 s, is retried with exponential backoff (5 s doubling to 1 h, with jitter) for 24 h.';

  app.get(
    '/api/webhooks/secret',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['webhooks'],
        operationId: 'getWebhookSecret',
        summary: 'Your webhook signing secret (created on first use)',
        description,
        response: { 200: WebhookSecret, ...errors(401, 403) },
      },
    },
    async (request) => webhooks.getSecret(request.auth!.userId),
  );

  app.post(
    '/api/webhooks/secret/rotate',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateWebhookSecret',
        summary: 'Replace your webhook signing secret; the previous one keeps signing beside it for 24 h',
        description:
          'Answers the new secret. For 24 hours every delivery carries two signatures (new and previous secret, space-separated in `webhook-signature`), so a receiver can switch to the new secret without rejecting anything; then the previous secret stops signing.',
        response: { 200: WebhookSecret, ...errors(401, 403) },
      },
    },
    async (request) => webhooks.rotateSecret(request.auth!.userId),
  );
}
