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
      description:
        'Compact JWS (ES256) signed with that server\'s private key, optionally nested in a compact JWE (ECDH-ES+A256KW, A256GCM, cty "JWT") to the key of GET /api/server (the SDK\'s signCallRequest builds it). Claims: `use: "call-session"` (optional), `exp` (at most 10 minutes ahead), a single-use `jti`, `agent` `{ name, personaId?, instructions?, firstMessage?, voicemailMessage?, analysis? }` (`analysis`: the post-call analysis settings `{ summary?, successCriteria?, schema?, tasks? }`, see POST /api/calls/{id}/analysis), `contact` `{ name, phone (E.164), fields? }`, optional `humanAgents` `[{ name, phone }]`, `type: "prompt"` with `prompt`, or `type: "pathway"` with `pathway` (a pathway document `{ name, start, variables?, nodes, edges, global? }` as POST /api/pathways/validate checks it, `{ id }` of your `conversational-pathways` store, or the old `{ name?, steps }`, run as a linear pathway), optional `variables` (at most 100, named `^[A-Za-z_][A-Za-z0-9_]{0,63}$`, each a string of up to 2,000 characters, a number or a boolean), `tools` (custom HTTP tools `{ type: "http", name, description, parameters, url, method?, headers?, timeoutMs?, speak?, assign?, keywords? }`: see DESIGN "Custom tools and call variables"; header values are kept encrypted), `knowledgeBase` `{ id }`, `integrations` (ids), `phoneNumberId` and `webhook` (URL). `{{name}}` (a variable), `{{contact.name}}`, `{{contact.phone}}`, `{{contact.fields.X}}` and `{{now}}` are filled in the agent\'s `instructions`, `firstMessage` and `voicemailMessage`, the `prompt` and the old steps; a name with no value is left empty.',
    }),
    script: Type.Optional({
      ...SandboxScriptSchema,
      description:
        "Sandbox calls only: what the sandbox carrier's simulated caller does once it answers — `default`, `voicemail` (an answering machine: its greeting, a beep, then the asynchronous AMD verdict `machine_end_beep`, after which the agent leaves the agent's `voicemailMessage` and hangs up; outcome `voicemail`) or a list of the caller's lines. Ignored when Twilio or an external audio server carries the call. Not part of the signed payload: it describes the test, not the call.",
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
        operationId: 'startCallSession',
        summary: 'Start a call from a payload signed by your server',
        description:
          "Verifies `jwt` with the public key of your registered server `server` and consumes its `jti`, then assembles the call: a system prompt from the agent, the prompt or pathway and the contact's fields; the pathway (resolved and checked), the custom tools and the variables for the voice agent to run; the voice of the agent's persona (default `local-amy`); a `search_knowledge` tool for `knowledgeBase`; the functions of each integration. It is placed from `phoneNumberId` (one of your voice-capable numbers; default your first one) and handed to the audio server. Answers 204 with the session id in `X-Session-Id`: follow it with `GET /api/events/call_status?session_id=<id>`; `webhook` receives the same `call_status` payloads signed with the secret of GET /api/webhooks/secret. 400 `invalid_token` for a jwt that is forged, expired, replayed, unsigned or for another use; 400 `invalid_input` for an ill-formed payload, `variables` or custom tool (the message names the field, e.g. `tools[0].url`; its jti stays unused); 422 `invalid_pathway` for a pathway that is not valid, with every error and its path in the pathway (an inline one: its jti stays unused; one named by `{ id }` is read after the jti is spent); 404 for a server, number, knowledge base, integration, persona or pathway that is not yours; 409 when you have no voice-capable number; 402 `insufficient_funds` when your plan has no outbound allowance left and your prepaid balance does not cover one minute at the destination's rate (GET /api/pricing/voice-countries); 429 `concurrency_limit` when as many calls as your account may have at once are under way (`CALL_CONCURRENCY_PER_USER`, or your plan's); 400 `unsupported_destination` for a country that is not priced; 502 when the audio server refuses the call (its hold is returned). Charges: a hold for the call's longest duration (`CALL_MAX_SECONDS`, or less when your balance covers less; the audio server ends the call then) less your remaining allowance; at the end seconds come from the allowance first, the rest is charged per started minute rounded up to the next cent, and the hold is settled once. Send an `Idempotency-Key` to retry safely.",
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
          operationId: 'receiveAudioReport',
          summary: "The audio server's progress report for one call session",
          description:
            "Called by the audio server (`AUDIO_SERVER_URL`), not by API users. Signed with `AUDIO_SERVER_SECRET` as Standard Webhooks specifies (`webhook-id`, `webhook-timestamp` within 5 minutes, `webhook-signature`), checked on the raw body before anything else; a bad or missing signature is 400 `invalid_token` and changes nothing. A report is applied once per `webhook-id`, and only when it moves the session forward (queued → ringing → in_progress → a final status); it then emits a `call_status` event and queues the session's webhook.",
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
