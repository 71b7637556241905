// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  listTemporaryCallTypes: {
    summary: 'List the call types of temporary test calls',
    description:
      'The preconfigured kinds of one-off test call this server offers (data: built in, or TEMPORARY_CALL_TYPES_FILE).',
  },
  requestTemporarySession: {
    summary: 'Send a code for a temporary test call',
    description:
      'Sends a 6-digit code by SMS to `phone` and returns a signed `key` bound to you, the phone, the call type and the code, valid 10 minutes. Limited per account, per phone and per IP (toll fraud): 429 past a limit. 400 for a phone that is not E.164 or an unknown type; 503 `numbers_busy` when the server has no temporary numbers; 502 when the SMS cannot be sent. Send an `Idempotency-Key` to retry without a second SMS.',
  },
  startTemporarySession: {
    summary: 'Start a temporary test call with the code',
    description:
      "Checks `code` against `key` (5 tries per key, then 400 `too_many_attempts`), spends the key (once, even across instances: a second use is 400 `invalid_token`), leases one of the server's temporary numbers and starts a one-off call of the key's type from it to the key's phone. The answer is the session id; progress arrives as `call_status` events. When the call ends the number returns to the pool and a summary is emailed to `email`. 400 `invalid_code` for a wrong code; 400 `invalid_token` for a forged, expired, used or another account's key; 503 `numbers_busy` when every temporary number is in a call (the key stays usable; see Retry-After); 502 when the audio server refuses the call. Send an `Idempotency-Key` to retry safely.",
  },
});

export const examples = {
  requestBody: { phone: '+14155550123', type: 'appointment-reminder' },
  startBody: {
    key: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InNlcnZpY2UtMSJ9.…',
    code: '493027',
    email: 'grace@example.com',
  },
  listTemporaryCallTypes: {
    types: [
      {
        id: 'appointment-reminder',
        name: 'Appointment reminder',
        description: 'An agent reminds you of a dental appointment tomorrow at 10:00 and offers to move it.',
      },
    ],
  },
  requestTemporarySession: {
    key: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InNlcnZpY2UtMSJ9.…',
    expiresAt: '2026-11-23T10:10:00.000Z',
  },
  startTemporarySession: { sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07' },
};
