// Standard Webhooks (https://www.standardwebhooks.com): the one signer and
// verifier for webhooks we send (call progress to users' URLs, call requests
// to the audio server) and webhooks we receive (the audio server's progress).
//
//   webhook-id:        a unique message id (the receiver's deduplication key)
//   webhook-timestamp: seconds since the epoch
//   webhook-signature: space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
//
// Secrets look like `whsec_<base64 key>`. Several signatures in one header let
// a receiver switch secrets without dropping a message (rotation).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';
/** Accepted clock difference between sender and receiver, both ways (the specification's default). */
export const TOLERANCE_SECONDS = 5 * 60;

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/** A new secret: 32 random bytes as `whsec_<base64>`. */
export const generateWebhookSecret = (): string => PREFIX + randomBytes(32).toString('base64');

/** The key bytes of a `whsec_` secret (a bare base64 key is accepted too). */
export function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  if (key.length < 16) throw new Error('webhook secret must hold at least 16 bytes');
  return key;
}

/** The `v1,<base64>` signature of one message. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}

/** Headers for one message signed with each of `secrets` (the current one first). */
export function signWebhook(
  secrets: readonly string[],
  id: string,
  timestampMs: number,
  body: string | Buffer,
): WebhookHeaders {
  if (secrets.length === 0) throw new Error('at least one secret is needed to sign');
  const seconds = Math.floor(timestampMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((s) => signature(s, id, seconds, body)).join(' '),
  };
}

type HeaderBag = Record<string, string | string[] | undefined>;

const header = (headers: HeaderBag | WebhookHeaders, name: string): string | undefined => {
  const value = (headers as HeaderBag)[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Checks a received message against `secret`, over the raw body exactly as it
 * arrived. Returns the message id (for deduplication); throws
 * WebhookSignatureError when a header is missing, the timestamp is outside
 * the tolerance, or no v1 signature matches (constant-time comparison).
 */
export function verifyWebhook(
  secret: string,
  headers: HeaderBag | WebhookHeaders,
  body: string | Buffer,
  nowMs: number,
): string {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookSignatureError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookSignatureError('webhook-timestamp is not a number of seconds');
  const seconds = Number(timestamp);
  if (Math.abs(Math.floor(nowMs / 1000) - seconds) > TOLERANCE_SECONDS)
    throw new WebhookSignatureError('webhook-timestamp is outside the tolerance');
  const expected = Buffer.from(signature(secret, id, seconds, body).slice(3), 'base64');
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return id;
  }
  throw new WebhookSignatureError('no matching signature');
}
