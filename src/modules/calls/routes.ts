// Progress reports of the audio server (DESIGN "Calls", "Provider webhooks in").
// POST /api/session/call is built on top of CallService.start once signed
// payloads, numbers, knowledge and personas are in (see docs/decisions/calls.md).
import { Type } from 'typebox';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { type AudioProvider, CALL_STATUSES } from '../../providers/audio/interface.js';
import type { CallService } from './service.js';
import type { CallSessionService } from './session-service.js';
import { SandboxScriptSchema } from '../voice-agent/sandbox-routes.js';
import { docs, fields } from './routes.docs.js';

const AudioReport = Type.Object(
  {
    status: Type.Union(CALL_STATUSES.map((s) => Type.Literal(s))),
    at: Type.String({ format: 'date-time' }),
    duration_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
    transcript: Type.Optional(
      Type.Array(
        Type.Object({ role: Type.Union([Type.Literal('agent'), Type.Literal('contact')]), text: Type.String() }),
      ),
    ),
  },
  {
    description: 'One status change of the call at the audio server',
    examples: [
      {
        status: 'completed',
        at: '2026-11-23T10:00:42.000Z',
        duration_seconds: 38,
        transcript: [
          { role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' },
          { role: 'contact', text: 'Hi Amy.' },
        ],
      },
    ],
  },
);

const StartCallBody = Type.Object(
  {
    server: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The name of your registered server that signed `jwt` (POST /api/servers)',
    }),
    jwt: Type.String({
      minLength: 1,
      maxLength: 65536,
      description: fields.jwt,
    }),
    script: Type.Optional({
      ...SandboxScriptSchema,
      description: fields.sandboxScript,
    }),
  },
  {
    examples: [
      { server: 'my-backend', jwt: 'eyJhbGciOiJFQ0RILUVTK0EyNTZLVyIsImVuYyI6IkEyNTZHQ00iLCJjdHkiOiJKV1QifQ.…' },
      { server: 'my-backend', jwt: 'eyJhbGciOiJFUzI1NiJ9.…', script: 'voicemail' },
    ],
  },
);

/** What the call routes touch: calls, the signed-payload call sessions, and the audio server (its reports, its lifetime). */
export interface CallRouteDeps {
  calls: CallService;
  sessions: CallSessionService;
  audio: AudioProvider;
}

export function callRoutes(app: App, deps: CallRouteDeps) {
  const { calls, sessions, audio } = deps;

  app.post(
    '/api/session/call',
    {
      // X-Session-Id is documented on the 204, so an Idempotency-Key replay carries it too (src/http/idempotency.ts).
      config: { auth: 'verified', idempotent: true },
      schema: {
        tags: ['calls'],
        ...docs.startCallSession,
        body: StartCallBody,
        response: {
          204: Type.Null({
            description: 'The call is under way; its session id is in the `X-Session-Id` header',
            headers: {
              'x-session-id': {
                type: 'string',
                description: 'The new call session: follow it with `GET /api/events/call_status?session_id=<id>`',
                examples: ['019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07'],
              },
            },
          }),
          ...errorResponses(
            'invalid_token',
            'unsupported_destination',
            'insufficient_funds',
            'not_found',
            'conflict',
            'invalid_pathway',
            'concurrency_limit',
            'provider_error',
          ),
        },
      },
    },
    async (request, reply) => {
      const { sessionId } = await sessions.startSigned(request.auth!.userId, request.body);
      return reply.status(204).header('x-session-id', sessionId).send(null);
    },
  );
  audio.reportErrorsTo?.(app.log);
  app.addHook('onClose', async () => audio.close?.());

  // The signature covers the body exactly as sent: this scope keeps JSON bodies as raw bytes.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/api/webhooks/audio/:sessionId',
      {
        schema: {
          tags: ['webhooks'],
          ...docs.receiveAudioReport,
          params: Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 100 }) }),
          headers: Type.Object({
            'webhook-id': Type.Optional(Type.String()),
            'webhook-timestamp': Type.Optional(Type.String()),
            'webhook-signature': Type.Optional(Type.String()),
          }),
          body: AudioReport,
          response: {
            204: Type.Null({ description: 'Accepted (also for a report seen before)' }),
            ...errorResponses('invalid_token', 'invalid_input', 'not_found', 'unsupported_media_type'),
          },
        },
        // The body is checked against the signature first and parsed by the service; the schema above documents it.
        validatorCompiler: ({ httpPart, schema }) =>
          httpPart === 'body'
            ? () => true
            : app.validatorCompiler!({ schema, httpPart, method: 'POST', url: '/api/webhooks/audio/:sessionId' }),
      },
      async (request, reply) => {
        await calls.handleAudioReport(
          (request.params as { sessionId: string }).sessionId,
          request.body as unknown as Buffer,
          request.headers,
        );
        return reply.status(204).send(null);
      },
    );
  });
}
