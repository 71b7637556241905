// Calls from a browser (DESIGN.md "Calls from a browser and the console"):
// POST /api/calls/web starts one, GET /api/media/web carries its audio over a
// WebSocket. The socket is a WebTransport of the same voice session as a
// phone call (runner.ts): turns, tools, record, latency and recording
// are shared code.
import { Type } from 'typebox';
import { AppError } from '../../http/errors.js';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { HttpToolDeclaration, MAX_TOOLS } from '../custom-tools/declaration.js';
import { examplePathway } from '../pathways/examples.js';
import { LegacyPathway } from '../pathways/legacy.js';
import { PathwayDocument } from '../pathways/schemas.js';
import type { MediaSockets } from './media-sockets.js';
import { WEB_MEDIA_PATH, type WebCalls } from './web-calls.js';

const id = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

const StoredPathway = Type.Object(
  { id: id('An object of your `conversational-pathways` store') },
  { additionalProperties: false },
);
const Pathway = (description: string) => Type.Union([PathwayDocument, StoredPathway, LegacyPathway], { description });
const PATHWAY_FORMS =
  'a pathway document (as POST /api/pathways/validate checks it), `{ id }` of your `conversational-pathways` store, or the old `{ name?, steps }` (a linear pathway)';

/**
 * The agent record and body as documented (`documented`), or as the route
 * validates them: there a pathway and tools may be anything, because the
 * service answers what is wrong with them (422 `invalid_pathway` with every
 * error, 400 naming a tool's field) as POST /api/session/call does.
 */
const agentRecord = (documented: boolean) =>
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 200 }),
      instructions: Type.Optional(Type.String({ maxLength: 10_000 })),
      prompt: Type.Optional(Type.String({ maxLength: 10_000 })),
      firstMessage: Type.Optional(
        Type.String({
          maxLength: 10_000,
          description: 'What the agent says first; default "Hello, this is <name>. How can I help you?"',
        }),
      ),
      voicemailMessage: Type.Optional(
        Type.String({ maxLength: 10_000, description: 'Unused by web calls (no answering machines)' }),
      ),
      personaId: Type.Optional(Type.String({ maxLength: 200 })),
      pathway: Type.Optional(
        documented ? Pathway(`The pathway the agent walks: ${PATHWAY_FORMS}; or \`pathwayId\``) : Type.Unknown(),
      ),
      pathwayId: Type.Optional(
        id('An object of your `conversational-pathways` store: the pathway the agent walks (instead of `pathway`)'),
      ),
      knowledgeBaseId: Type.Optional(Type.String({ maxLength: 100 })),
      integrations: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 })),
      tools: Type.Optional(
        documented
          ? Type.Array(HttpToolDeclaration, {
              maxItems: MAX_TOOLS,
              description:
                "Custom HTTP tools the agent may call (names unique, none of the built-in tools'); header values are kept encrypted",
            })
          : Type.Unknown(),
      ),
      maxDurationSeconds: Type.Optional(
        Type.Integer({ minimum: 1, description: 'Shorter than WEB_CALL_MAX_SECONDS: the call ends then' }),
      ),
    },
    {
      additionalProperties: true,
      description: 'An agent record, the same JSON as the records of your `agents` store (unknown fields ignored)',
    },
  );

const startWebCallBody = (documented: boolean) =>
  Type.Object(
    {
      agentId: Type.Optional(id('An object of your `agents` store holding an agent record (send this or `agent`)')),
      agent: Type.Optional(agentRecord(documented)),
      knowledgeBaseId: Type.Optional(
        id("One of your knowledge bases: the agent's `search_knowledge` tool searches it (instead of the agent's own)"),
      ),
      integrations: Type.Optional(
        Type.Array(id('An integration id'), {
          maxItems: 20,
          description: "Your integrations whose functions the agent may call (instead of the agent's own)",
        }),
      ),
      personaId: Type.Optional(
        id("The voice and manner (GET /api/personas), instead of the agent's own; default local-amy"),
      ),
      pathwayId: Type.Optional(
        id("An object of your `conversational-pathways` store: the pathway of this call, instead of the agent's own"),
      ),
      pathway: Type.Optional(
        documented ? Pathway(`The pathway of this call, instead of the agent's own: ${PATHWAY_FORMS}`) : Type.Unknown(),
      ),
    },
    {
      examples: [
        { agentId: '019ab3f0-5d11-7c2e-8f3a-4b6c1d2e3f40' },
        {
          agent: {
            name: 'Amy',
            firstMessage: 'Hello, this is Amy from the clinic. How can I help?',
            prompt: 'Answer questions about the clinic.',
          },
          knowledgeBaseId: '019ab3f0-6e22-7d3f-9a4b-5c7d2e3f4051',
          personaId: 'local-amy',
        },
        { agentId: '019ab3f0-5d11-7c2e-8f3a-4b6c1d2e3f40', pathwayId: '019ab3f0-8a33-7e40-9b5c-6d8e3f405162' },
        {
          agent: {
            name: 'Ava',
            firstMessage: 'Hi, this is Ava from Acme. How can I help?',
            pathway: examplePathway,
            tools: [
              {
                type: 'http',
                name: 'check_order',
                description: 'Looks an order up by its number',
                parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
                url: 'https://api.example.com/orders/lookup',
                headers: { Authorization: 'Bearer sk_live_abc123' },
                speak: 'One moment while I look that up.',
              },
            ],
          },
        },
      ],
    },
  );

const StartWebCallBody = startWebCallBody(true);
const ValidatedWebCallBody = startWebCallBody(false);

const WebCallStarted = Type.Object({
  sessionId: Type.String({
    description: 'The call session: GET /api/calls/{sessionId}, or follow GET /api/events/call_status?session_id=<id>',
  }),
  url: Type.String({ description: 'Open this WebSocket within 60 s; its token is single use' }),
  expiresAt: Type.String({ format: 'date-time', description: 'When `url` stops being accepted' }),
  audio: Type.Object(
    {
      encoding: Type.Literal('pcm16le'),
      sampleRate: Type.Integer({ description: 'Samples per second, both ways' }),
      frameMs: Type.Literal(20),
    },
    { description: 'The audio of the socket, both ways: mono signed 16-bit little-endian PCM, in whole 20 ms frames' },
  ),
});

const PROTOCOL = [
  'The audio and messages of a web call started with POST /api/calls/web; open the `url` of its answer (this route with `?token=`) with a WebSocket client within 60 s. The token is single use: a missing, forged, expired or already used token closes the socket with code 1008. A plain GET (no WebSocket upgrade) is 426.',
  '',
  '**Limits.** Until the token is accepted (a few milliseconds) the socket has 5 s and a place among at most MEDIA_UNAUTHENTICATED_PER_ADDRESS (8) such sockets per remote address and MEDIA_UNAUTHENTICATED_MAX (200) in all (beyond: closed at once with 1013). A message is at most 64 KB (two seconds of audio; larger: closed with 1009). The first message that is not this protocol closes the socket: 1007 for audio not in whole frames or text that is not JSON, 1008 for any other; a call under way then ends `failed`, outcome `refused`, reason `invalid_message`, after an `ended` message. Caller audio is taken at real time plus 10 %, with a 2 s burst: frames beyond are dropped (counted, not heard); a client 7 s ahead of real time (2× real time for 7 s; 100× within a tenth of a second) is sent `{ "type": "ended", "reason": "audio_flood" }`, closed with 1008, and its call ends `refused`. Text messages beyond 50 a second (200 at once) are dropped likewise (`message_flood`).',
  '',
  '**Client → server.** Binary frames: caller audio, PCM16LE mono at the announced `sampleRate` (16 kHz), any whole number of 20 ms frames (640 bytes each at 16 kHz), as it is captured. Text frames, JSON:',
  '- `{ "type": "mark", "name": "<name>" }`: the client has played the agent\'s audio up to that mark. Echo every mark once its audio has played (not when it arrives): the history keeps only what the caller heard, and the agent waits for the last mark before it listens for silence or hangs up. A mark echoed after a `clear` is stale and ignored.',
  '- `{ "type": "dtmf", "digit": "0"–"9" | "*" | "#" | "A"–"D" }`: a key press.',
  '- `{ "type": "hangup" }`: the caller hangs up; the server ends the call (outcome `completed`, reason `caller_hung_up`), answers `ended` and closes the socket with 1000. Closing the socket ends the call too (reason `socket_closed`).',
  '',
  "**Server → client.** Binary frames: the agent's audio, PCM16LE mono at the same rate, in 20 ms frames paced in real time (a little ahead, never a whole sentence at once). Text frames, JSON:",
  '- `{ "type": "mark", "name": "<name>" }`: after each chunk of a reply (every 400 ms of audio and at the end of each sentence); echo it once played.',
  '- `{ "type": "clear" }`: the caller spoke over the agent (barge-in): stop playback now and drop what is queued.',
  '- `{ "type": "transcript", "role": "agent" | "caller", "text": "…", "final": true | false, "interrupted"?: true }`: the transcript as it is said. An agent reply first comes with `final: false` as the agent starts saying each of its sentences (its first audio frame goes out), the text growing by a sentence each time: show it at once, the words arrive with their audio, not after it. Once the reply has played, or the caller cut it, the same line comes again with `final: true` and what the caller heard of it (the record\'s line), plus `interrupted: true` when a barge-in cut it; an empty text means none of it was heard. Each agent line is one reply: its `final: false` messages are replaced by the next message of the same role. A caller line comes once, `final: true`, at the end of the caller\'s turn; without a recogniser it reads `(speech not recognised)`, and words the recogniser was not sure of are followed by `(unclear)` (the agent did not act on them).',
  '- `{ "type": "tool", "name": "search_knowledge", "arguments": { … }, "result": { … } }`: a tool the agent called, with its result.',
  '- `{ "type": "ended", "reason": "<reason>" }`: the call is over; the socket then closes with 1000. Reasons: `agent_ended` (the agent said goodbye), `silence` (no answer to two reprompts), `max_duration` (WEB_CALL_MAX_SECONDS or the agent\'s `maxDurationSeconds`), `provider_error`, `ended_by_server`, and `caller_hung_up` after the client\'s own `hangup`. Nothing is sent once the client has closed the socket.',
  '',
  'The call is recorded like a phone call: `call_status` events with `direction: "web"` (in_progress, then completed or failed), `call_transcript` events, and once it ends GET /api/calls/{id} with its transcript, tool calls, per-turn latency and, when CALL_RECORDING is on, the two-channel recording (8 kHz). Web calls are never charged.',
].join('\n');

/** What the browser-call routes touch: web calls (their rules) and the media sockets (the call carried). */
export interface WebCallRouteDeps {
  webCalls: WebCalls;
  mediaSockets: MediaSockets;
}

export function webCallRoutes(app: App, voice: WebCallRouteDeps) {
  const { webCalls } = voice;
  app.post(
    '/api/calls/web',
    {
      config: { auth: 'verified' },
      // The documented body is not the gate for a pathway and tools (startWebCallBody).
      validatorCompiler: (route) =>
        app.validatorCompiler!({ ...route, schema: route.httpPart === 'body' ? ValidatedWebCallBody : route.schema }),
      schema: {
        tags: ['calls'],
        operationId: 'startWebCall',
        summary: 'Call your agent from a browser',
        description:
          "Starts a free test call with an agent: `agentId` (an object of your `agents` store holding an agent record) or `agent` (an agent record inline), optionally with a knowledge base, integrations, a persona and a pathway (`pathwayId`, or `pathway`: a document, `{ id }` or the old `{ name?, steps }`) that replace the agent's own. The agent's `pathway` or `pathwayId` and custom `tools` are checked as for POST /api/session/call; `{{contact.name}}` and `{{now}}` in its instructions, prompt and first message are filled in (an unknown `{{name}}` is left empty). The answer names the session, a single-use WebSocket URL valid 60 s (GET /api/media/web: its protocol is described there) and the audio format both ways. The call is carried by the same voice agent as phone calls: recognition is the configured speech to text (else pocketsphinx when installed, at the browser's 16 kHz; else each caller utterance is \"(speech not recognised)\"), the answer comes from the configured model or the sandbox dialogue engine. Web calls are never charged; they end after WEB_CALL_MAX_SECONDS (600) or the agent's shorter `maxDurationSeconds` (outcome `max_duration`). 400 `invalid_input` without exactly one of `agentId` and `agent`, for an agent object that is not an agent record, for both `pathway` and `pathwayId`, or for a custom tool that is not valid (the message names its field, e.g. `agent.tools[0].url`); 404 for an agent, knowledge base, integration, persona or pathway that is not yours; 422 `invalid_pathway` for a pathway that is not valid (every error, with its path in the pathway); 429 `too_many_calls` when WEB_CALL_CONCURRENCY_PER_USER (2) web calls of yours are set up or under way (a set-up call counts until its URL expires); 429 `rate_limited` past 20 web calls started per hour (see Retry-After).",
        body: StartWebCallBody,
        response: {
          201: ok(WebCallStarted, 'The call is set up: open `url` within 60 s', {
            sessionId: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
            url: 'wss://api.example.com/api/media/web?token=eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.…',
            expiresAt: '2026-11-26T10:01:00.000Z',
            audio: { encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 },
          }),
          ...errorResponses('invalid_input', 'not_found', 'invalid_pathway', 'too_many_calls', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const started = await webCalls.start(request.auth!.userId, request.body);
      return reply.status(201).send(started);
    },
  );

  app.route({
    method: 'GET',
    url: WEB_MEDIA_PATH,
    schema: {
      tags: ['calls'],
      operationId: 'webCallMedia',
      summary: 'The WebSocket of a web call (audio both ways, transcript, tool calls, marks, clear, end)',
      description: PROTOCOL,
      // Checked by the socket (close 1008), not by validation: a refused upgrade would tell the client less.
      querystring: Type.Object({
        token: Type.Optional(
          Type.String({
            maxLength: 4096,
            description: 'The token of the `url` POST /api/calls/web answered (required)',
            examples: ['eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiIwMTlhYjNmMCJ9.c2lnbmF0dXJl'],
          }),
        ),
      }),
      response: {
        101: Type.Null({
          description: 'Switching Protocols: the WebSocket is open (see the description for its messages)',
        }),
        ...errorResponses('upgrade_required'),
      },
    },
    handler: async () => {
      throw new AppError(
        'upgrade_required',
        `${WEB_MEDIA_PATH} is a WebSocket: open it with a WebSocket client`,
        {},
        { upgrade: 'websocket', connection: 'Upgrade' },
      );
    },
    wsHandler: (socket, request) =>
      voice.mediaSockets.carryWeb(socket, request.ip, (request.query as { token?: string }).token, app.log),
  });
}
