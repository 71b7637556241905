// The caller's webhook signing secret (DESIGN "Calls"). Deliveries themselves
// are sent by the worker, which runs while the app is ready.
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { WebhookService } from './service.js';
import type { WebhookWorker } from './worker.js';
import { docs, examples } from './routes.docs.js';

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
    examples: [examples.webhookSecret],
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

  app.get(
    '/api/webhooks/secret',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['webhooks'],
        ...docs.getWebhookSecret,
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
        ...docs.listWebhookDeliveries,
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
            examples: [examples.listWebhookDeliveries],
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
        ...docs.rotateWebhookSecret,
        response: { 200: WebhookSecret, ...errors(401, 403) },
      },
    },
    async (request) => webhooks.rotateSecret(request.auth!.userId),
  );
}
