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
import { LegacyPathway } from '../pathways/legacy.js';
import { PathwayDocument } from '../pathways/schemas.js';
import type { MediaSockets } from './media-sockets.js';
import { WEB_MEDIA_PATH, type WebCalls } from './web-calls.js';
import { docs, examples } from './web-routes.docs.js';

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
    { examples: examples.startWebCallBody },
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
        ...docs.startWebCall,
        body: StartWebCallBody,
        response: {
          201: ok(WebCallStarted, 'The call is set up: open `url` within 60 s', examples.startWebCall),
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
      ...docs.webCallMedia,
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
