// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  getWebhookSecret: {
    summary: 'Your webhook signing secret (created on first use)',
    description:
      'Call progress sent to a session\'s `webhook` URL is signed as Standard Webhooks specifies: headers `webhook-id` (the message id, the same on every retry: deduplicate on it), `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64 part of this secret). Body: `{ "type": "call_status", "timestamp", "data": <the call_status event payload> }`. Any 2xx answer ends a delivery; anything else, or no answer within 10 s, is retried with exponential backoff (5 s doubling to 1 h, with jitter) for 24 h.',
  },
  listWebhookDeliveries: {
    summary: 'Your most recent webhook deliveries and how they went, newest first',
    description:
      'For finding out why a receiver did not get something: each delivery with its attempts, the last answer or error, and when a pending one is tried next.',
  },
  rotateWebhookSecret: {
    summary: 'Replace your webhook signing secret; the previous one keeps signing beside it for 24 h',
    description:
      'Answers the new secret. For 24 hours every delivery carries two signatures (new and previous secret, space-separated in `webhook-signature`), so a receiver can switch to the new secret without rejecting anything; then the previous secret stops signing.',
  },
});

export const examples = {
  webhookSecret: {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Q8GxZLzoPk=',
    createdAt: '2026-11-23T10:00:00.000Z',
    previousSecretValidUntil: null,
  },
  listWebhookDeliveries: [
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
};
