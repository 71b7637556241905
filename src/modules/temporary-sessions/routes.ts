// GET / PUT / POST /api/session/temporary (spec 4.14, 3.4): temporary test
// calls. Rules: TemporarySessionService.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import { type App, metaOf } from '../../http/types.js';
import type { TemporarySessionService } from './service.js';

const CallTypeView = Type.Object({
  id: Type.String({ description: 'What PUT names as `type`' }),
  name: Type.String(),
  description: Type.String({ description: 'What the agent does on the call' }),
});

const TypesAnswer = Type.Object({ types: Type.Array(CallTypeView) });

const RequestBody = Type.Object(
  {
    phone: Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'The number to call, international (E.164) form; the code goes to it by SMS',
    }),
    type: Type.String({ minLength: 1, maxLength: 64, description: 'A call type id of GET /api/session/temporary' }),
  },
  { additionalProperties: false, examples: [{ phone: '+14155550123', type: 'appointment-reminder' }] },
);

const KeyAnswer = Type.Object({
  key: Type.String({
    description:
      'Signed key (JWS) bound to you, the phone, the type and the code; send it back with the code within 10 minutes. It is spent by the first successful POST.',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});

const StartBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 4096, description: 'The key PUT returned' }),
    code: Type.String({ minLength: 1, maxLength: 16, description: 'The 6-digit code sent by SMS' }),
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'Where the call summary (status, duration, transcript) is sent when the call ends',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        key: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InNlcnZpY2UtMSJ9.…',
        code: '493027',
        email: 'grace@example.com',
      },
    ],
  },
);

const SessionAnswer = Type.Object({
  sessionId: Type.String({
    description: 'The call session: follow it with GET /api/events/call_status?session_id=<id>',
  }),
});

/** What the temporary-session routes touch. */
export interface TemporarySessionRouteDeps {
  temporary: TemporarySessionService;
}

export function temporarySessionRoutes(app: App, deps: TemporarySessionRouteDeps) {
  const { temporary } = deps;

  app.get(
    '/api/session/temporary',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['calls'],
        operationId: 'listTemporaryCallTypes',
        summary: 'List the call types of temporary test calls',
        description:
          'The preconfigured kinds of one-off test call this server offers (data: built in, or TEMPORARY_CALL_TYPES_FILE).',
        response: {
          200: ok(TypesAnswer, 'The call types', {
            types: [
              {
                id: 'appointment-reminder',
                name: 'Appointment reminder',
                description: 'An agent reminds you of a dental appointment tomorrow at 10:00 and offers to move it.',
              },
            ],
          }),
        },
      },
    },
    async () => ({ types: temporary.types() }),
  );

  app.put(
    '/api/session/temporary',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['calls'],
        operationId: 'requestTemporarySession',
        summary: 'Send a code for a temporary test call',
        description:
          'Sends a 6-digit code by SMS to `phone` and returns a signed `key` bound to you, the phone, the call type and the code, valid 10 minutes. Limited per account, per phone and per IP (toll fraud): 429 past a limit. 400 for a phone that is not E.164 or an unknown type; 503 `numbers_busy` when the server has no temporary numbers; 502 when the SMS cannot be sent. Send an `Idempotency-Key` to retry without a second SMS.',
        body: RequestBody,
        response: {
          200: ok(KeyAnswer, 'The code was sent; keep the key', {
            key: 'eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InNlcnZpY2UtMSJ9.…',
            expiresAt: '2026-11-23T10:10:00.000Z',
          }),
          ...errorResponses('invalid_input', 'rate_limited', 'provider_error', 'numbers_busy'),
        },
      },
    },
    async (request) => temporary.request(request.auth!.userId, request.body, metaOf(request)),
  );

  app.post(
    '/api/session/temporary',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['calls'],
        operationId: 'startTemporarySession',
        summary: 'Start a temporary test call with the code',
        description:
          "Checks `code` against `key` (5 tries per key, then 400 `too_many_attempts`), spends the key (once, even across instances: a second use is 400 `invalid_token`), leases one of the server's temporary numbers and starts a one-off call of the key's type from it to the key's phone. The answer is the session id; progress arrives as `call_status` events. When the call ends the number returns to the pool and a summary is emailed to `email`. 400 `invalid_code` for a wrong code; 400 `invalid_token` for a forged, expired, used or another account's key; 503 `numbers_busy` when every temporary number is in a call (the key stays usable; see Retry-After); 502 when the audio server refuses the call. Send an `Idempotency-Key` to retry safely.",
        body: StartBody,
        response: {
          200: ok(SessionAnswer, 'The call is under way', { sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07' }),
          ...errorResponses(
            'invalid_code',
            'invalid_token',
            'too_many_attempts',
            'rate_limited',
            'numbers_busy',
            'provider_error',
          ),
        },
      },
    },
    async (request) => temporary.start(request.auth!.userId, request.body),
  );
}
