// What each error code means, for the OpenAPI document: the description of an
// error answer lists its codes with these lines, and each code gets an example.
// A code without a line here is documented by its name alone; add a line when
// you add a code to errors.ts.
import type { ErrorCode } from './errors.js';

export const errorMeaning: Partial<Record<ErrorCode, string>> = {
  invalid_input: 'a parameter or body field is missing, malformed or out of range (the message names it)',
  invalid_json: 'the body is not valid JSON',
  email_taken: 'an account with this email exists',
  passwords_mismatch: 'password and confirmPassword differ',
  invalid_code: 'the one-time code is wrong',
  two_factor_not_configured: 'two-factor authentication is not enabled for this account',
  two_factor_setup_missing: 'no two-factor setup is pending: request one first',
  code_expired: 'the one-time code has expired: request a new one',
  too_many_attempts: 'too many wrong codes: request a new one',
  invalid_token: 'the link or token is invalid, used or expired',
  invalid_return_url: 'the return URL is not on an allowed origin',
  provider_refused: 'the provider refused the request (e.g. an invalid phone number)',
  email_not_verified:
    'the external provider has not verified the email address it shared: verify it there, or sign up with a password',
  no_phone: 'the account has no phone number',
  invalid_key: 'a key is malformed',
  invalid_signature: 'the request signature (a provider webhook signature header) does not verify',
  unsupported_destination:
    'calls to this country are not offered (GET /api/pricing/voice-countries lists those that are)',
  unauthenticated: 'no credential, or an invalid, expired or revoked token or API key',
  invalid_credentials: 'wrong email or password',
  phone_not_verified: 'the phone number must be verified first',
  two_factor_required: 'two-factor verification is pending for this session',
  forbidden: 'the caller may not do this',
  not_found: 'no such resource for this caller',
  route_not_found: 'no such route',
  provider_not_found: 'no such external sign-in provider',
  conflict: 'the request conflicts with the current state',
  identity_conflict: 'the external identity belongs to another account',
  account_exists:
    'an account with this email already exists: sign in to it (with its password), then attach the provider from that session',
  payment_method_required: 'a payment method is required first',
  idempotency_in_progress: 'a request with this idempotency key is still running',
  invalid_state: "the resource's status does not allow this move (the message says which status it has)",
  do_not_call: 'the number is on your do-not-call list (GET /api/do-not-call): no outbound call dials it',
  insufficient_funds: 'the balance does not cover this',
  idempotency_mismatch: 'this idempotency key was used with a different request',
  version_mismatch: 'the object changed since the version you sent',
  payload_too_large: 'the body is larger than the limit',
  quota_exceeded: "the account's storage quota would be passed (the answer says what is used and what is allowed)",
  file_too_complex: 'a file took longer or more memory to read than the limit per file (the answer names it)',
  invalid_pathway:
    'the conversational pathway is not valid: `errors` lists each problem with its path in the document (POST /api/pathways/validate checks one)',
  invalid_campaign: 'a contact phone, time zone or schedule of the campaign is not valid (the message names it)',
  unsupported_media_type: 'the content-type is not accepted here',
  upgrade_required:
    'this URL is a WebSocket: open it with a WebSocket client (Connection: Upgrade, Upgrade: websocket)',
  rate_limited: 'too many requests: wait and retry (see Retry-After)',
  concurrency_limit:
    "as many calls as the account may have at once are under way (CALL_CONCURRENCY_PER_USER, or the plan's): retry when one ends",
  too_many_calls:
    'as many web calls as one account may have at once are set up or under way (WEB_CALL_CONCURRENCY_PER_USER): hang one up first',
  voice_preview_quota_exceeded:
    'the daily characters of paid voice previews are used up (see Retry-After, limit and remaining)',
  request_timeout: 'the request took too long to arrive',
  uri_too_long: 'a path parameter is longer than the router accepts',
  headers_too_large: 'the request headers are too large',
  internal_error: 'an unexpected server fault (the message carries the request id)',
  provider_error: 'an outside provider failed or could not be reached',
  not_ready: 'the server is not ready (e.g. the database is unreachable)',
  numbers_busy: 'no temporary number is free to place the test call from: retry later (see Retry-After)',
};

export const describeCode = (code: string) => errorMeaning[code as ErrorCode] ?? code.replace(/_/g, ' ');

/** A field an error answer carries next to `message` and `code`: its JSON schema and an example value. */
export interface ErrorField {
  schema: Record<string, unknown>;
  example: unknown;
}

const usage = {
  type: 'object',
  required: ['documents', 'chunks', 'bytes'],
  properties: { documents: { type: 'integer' }, chunks: { type: 'integer' }, bytes: { type: 'integer' } },
};

/**
 * Fields an error code's answer carries wherever the code is answered, for the
 * document (the error handler sends AppError's `extra` as they are). A route
 * whose answer carries fields of its own declares them with `errorWith`
 * (src/http/schemas.ts).
 */
export const errorFields: Partial<Record<ErrorCode, Record<string, ErrorField>>> = {
  version_mismatch: {
    version: {
      schema: {
        type: 'integer',
        minimum: 1,
        description: 'The current version: read the object again, or retry with `If-Match: "<version>"`',
      },
      example: 3,
    },
  },
  rate_limited: {
    retryAfter: {
      schema: {
        type: 'integer',
        minimum: 1,
        description: 'Seconds to wait, as the Retry-After header (absent when only the header says it)',
      },
      example: 30,
    },
  },
  voice_preview_quota_exceeded: {
    retryAfter: {
      schema: {
        type: 'integer',
        minimum: 1,
        description: 'Seconds until the daily quota starts again (also Retry-After)',
      },
      example: 3600,
    },
    limit: { schema: { type: 'integer', description: 'Characters per day' }, example: 20000 },
    remaining: { schema: { type: 'integer', minimum: 0, description: 'Characters still left today' }, example: 120 },
  },
  quota_exceeded: {
    used: {
      schema: { ...usage, description: 'What the account stores now' },
      example: { documents: 12, chunks: 9800, bytes: 48000000 },
    },
    allowed: {
      schema: { ...usage, description: 'The quota' },
      example: { documents: 1000, chunks: 10000, bytes: 50000000 },
    },
    adding: {
      schema: { ...usage, description: 'What the refused request would have added' },
      example: { documents: 1, chunks: 400, bytes: 2500000 },
    },
  },
  invalid_pathway: {
    errors: {
      schema: {
        type: 'array',
        description: 'Every error of the pathway, in document order',
        items: {
          type: 'object',
          required: ['path', 'message'],
          properties: {
            path: { type: 'string', description: 'A JSON pointer into the pathway, e.g. `/nodes/3/id`' },
            message: { type: 'string' },
          },
        },
      },
      example: [
        { path: '/nodes/3/id', message: 'duplicate id "greet" (first at /nodes/0)' },
        { path: '/edges/2/to', message: 'no node has id "confirm"' },
      ],
    },
  },
  payment_method_required: {
    checkoutUrl: {
      schema: { type: 'string', format: 'uri', description: 'Open it to add a card, then retry the request' },
      example: 'https://checkout.stripe.com/c/pay/cs_test_a1b2c3',
    },
  },
};

/** `required` fields are always sent with the code; the others only in the cases their description names. */
export const requiredErrorFields: Partial<Record<ErrorCode, string[]>> = {
  version_mismatch: ['version'],
  voice_preview_quota_exceeded: ['retryAfter', 'limit', 'remaining'],
  quota_exceeded: ['used', 'allowed', 'adding'],
  payment_method_required: ['checkoutUrl'],
  invalid_pathway: ['errors'],
};
