// GET / PUT / POST /api/session/temporary (spec 4.14, 3.4): temporary test
// calls. Rules: TemporarySessionService.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import { type App, metaOf } from '../../http/types.js';
import type { TemporarySessionService } from './service.js';
import { docs, examples } from './routes.docs.js';

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
  { additionalProperties: false, examples: [examples.requestBody] },
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
    examples: [examples.startBody],
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
        ...docs.listTemporaryCallTypes,
        response: {
          200: ok(TypesAnswer, 'The call types', examples.listTemporaryCallTypes),
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
        ...docs.requestTemporarySession,
        body: RequestBody,
        response: {
          200: ok(KeyAnswer, 'The code was sent; keep the key', examples.requestTemporarySession),
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
        ...docs.startTemporarySession,
        body: StartBody,
        response: {
          200: ok(SessionAnswer, 'The call is under way', examples.startTemporarySession),
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
