// The caller's webhook signing secret (DESIGN "Calls"). Deliveries themselves
// are sent by the worker, which runs while the app is ready.
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { WebhookService } from './service.js';
import type { WebhookWorker } from './worker.js';

const WebhookSecret = Type.Object(
  {
    secret: Type.String({
      description: 'Standard Webhooks secret (`whsec_<base64>`): verify `webhook-signature` with it',
    }),
    createdAt: Type.String({
      format: 'date-time',
      description: 'When this secret was made (first use or last rotation)',
    }),
    previousSecretValidUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'After a rotation: until then deliveries also carry a signature made with the previous secret',
    }),
  },
  {
    description: 'The signing secret',
    examples: [
      {
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Q8GxZLzoPk=',
        createdAt: '2026-11-23T10:00:00.000Z',
        previousSecretValidUntil: null,
      },
    ],
  },
);

const Delivery = Type.Object({
  id: Type.String({ description: 'The `webhook-id` header of every attempt' }),
  url: Type.String(),
  type: Type.String({ description: 'The message type, e.g. call_status' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
    description: 'failed: no 2xx within 24 h',
  }),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a pending delivery is tried next',
  }),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()], {
    description: 'HTTP status of the last attempt; null when it got no answer',
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last attempt failed (`HTTP 500`, `timed out`, …)',
  }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

/** What the webhook routes touch: the secrets and deliveries, and the delivery worker they start and stop with the app. */
export interface WebhookRouteDeps {
  webhooks: WebhookService;
  webhookWorker: WebhookWorker;
  stop: () => Promise<void>;
}

export function webhookRoutes(app: App, deps: WebhookRouteDeps) {
  const { webhooks, webhookWorker, stop } = deps;
  webhookWorker.reportErrorsTo(app.log);
  app.addHook('onReady', async () => webhookWorker.start());
  app.addHook('onClose', stop);

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

  app.get(
    '/api/webhooks/deliveries',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: 'Your most recent webhook deliveries and how they went, newest first',
        description:
          'For finding out why a receiver did not get something: each delivery with its attempts, the last answer or error, and when a pending one is tried next.',
        querystring: Type.Object({
          limit: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 200,
              default: 50,
              description: 'At most this many deliveries (default 50)',
            }),
          ),
        }),
        response: {
          200: Type.Array(Delivery, {
            description: 'Deliveries, newest first',
            examples: [
              [
                {
                  id: 'msg_01a209f6c3c07000a1b2c3d4e5f60718',
                  url: 'https://example.com/hooks/calls',
                  type: 'call_status',
                  status: 'pending',
                  attempts: 2,
                  nextAttemptAt: '2026-11-23T10:00:15.000Z',
                  lastStatusCode: 503,
                  lastError: 'HTTP 503',
                  createdAt: '2026-11-23T10:00:00.000Z',
                  updatedAt: '2026-11-23T10:00:05.000Z',
                },
              ],
            ],
          }),
          ...errors(400, 401, 403),
        },
      },
    },
    async (request) => webhooks.listDeliveries(request.auth!.userId, request.query.limit ?? 50),
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
