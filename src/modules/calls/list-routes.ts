// The account's calls (DESIGN.md "Voice agent: the exact contract", "Calls
// from a browser"): GET /api/calls, GET /api/calls/{id} with the ended call's
// record, and its recording.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { CallAnalysisSchema } from '../analysis/schemas.js';
import type { CallViews } from './call-views.js';
import { docs, examples } from './list-routes.docs.js';

const Latency = Type.Object({
  sttMs: Type.Number(),
  llmFirstTokenMs: Type.Number(),
  ttsFirstByteMs: Type.Number(),
  overheadMs: Type.Number(),
  totalMs: Type.Number(),
});
const TranscriptLine = Type.Object(
  {
    role: Type.Union([Type.Literal('agent'), Type.Literal('caller')]),
    text: Type.String(),
    startMs: Type.Optional(
      Type.Number({
        description:
          'ms since the call was answered (absent for calls of an external audio server or the timer sandbox)',
      }),
    ),
    endMs: Type.Optional(Type.Number()),
    interrupted: Type.Optional(
      Type.Boolean({ description: 'An agent line cut by the caller: its text is what was heard' }),
    ),
    recognised: Type.Optional(
      Type.Boolean({
        description: "false: not recognised from audio (no recogniser, or the sandbox caller's own words)",
      }),
    ),
    latency: Type.Optional(Latency),
    node: Type.Optional(
      Type.String({ description: 'A call that walks a pathway: the node that was current when the line was said' }),
    ),
    keypad: Type.Optional(
      Type.Boolean({ description: 'A caller line that is a key pressed (DTMF): `text` is the key' }),
    ),
  },
  { additionalProperties: true },
);
const CallPathwayRecord = Type.Object(
  {
    id: Type.Optional(
      Type.String({ description: 'The object of your `conversational-pathways` store; absent for an inline pathway' }),
    ),
    name: Type.String(),
    path: Type.Array(
      Type.Object({
        node: Type.String(),
        atMs: Type.Number({ description: 'ms since the call was answered' }),
        edge: Type.Optional(
          Type.String({
            description:
              'The edge taken, as a JSON pointer into the document (`/edges/3`, `/global/0`); none for the start',
          }),
        ),
      }),
      { description: 'Every node the call entered, in order' },
    ),
    variables: Type.Record(Type.String(), Type.Unknown(), {
      description: "The pathway's variables at the end: the call's, and what it collected and assigned",
    }),
    document: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'An inline pathway (no `id`): its document, to draw the path on; header values of its tools `****`',
      }),
    ),
  },
  { description: 'The pathway the call walked (calls of `type: "pathway"` and agents with one)' },
);

const ToolCall = Type.Object({
  name: Type.String(),
  arguments: Type.Unknown(),
  result: Type.Unknown(),
  atMs: Type.Number(),
});
const callItemFields = {
  id: Type.String(),
  direction: Type.String({ description: 'outbound, inbound or web' }),
  status: Type.String({ description: 'queued, ringing, in_progress, completed, failed, busy, no_answer or canceled' }),
  outcome: Type.Optional(
    Type.String({
      description:
        'Why it ended: completed, voicemail, transferred, no_answer, busy, refused, provider_error, instance_stopped, max_duration, pathway_error (its pathway could not go on: the move limit, a step with no way on)',
    }),
  ),
  reason: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  startedAt: Type.String({ format: 'date-time' }),
  answeredAt: Type.Optional(Type.String({ format: 'date-time' })),
  endedAt: Type.Optional(Type.String({ format: 'date-time' })),
  durationSeconds: Type.Optional(Type.Integer()),
  costUsd: Type.Optional(
    Type.Number({
      description:
        "What the call was charged, in US dollars, once settled (seconds within the plan's allowance cost nothing), its transfer leg included once that is settled; absent while it runs and for calls that are never charged (web and temporary calls, refused calls)",
    }),
  ),
  campaignId: Type.Optional(
    Type.String({ description: 'The campaign the call is an attempt of (GET /api/campaigns/{id})' }),
  ),
};
const CallItem = Type.Object(callItemFields);
const CallPage = Type.Object({
  calls: Type.Array(CallItem),
  nextBefore: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `before` for the next page; null on the last',
  }),
});
const CallDetail = Type.Object({
  ...callItemFields,
  transcript: Type.Optional(Type.Array(TranscriptLine)),
  toolCalls: Type.Optional(Type.Array(ToolCall)),
  pathway: Type.Optional(CallPathwayRecord),
  variables: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: "The call's variables at its end (the payload's, and what the call collected or its tools assigned)",
    }),
  ),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description: 'What the call let pass: `{{names}}` filled with nothing, a webhook node or SMS node that failed',
    }),
  ),
  recordingUrl: Type.Optional(
    Type.String({ description: 'GET it for the two-channel WAV (caller left, agent right)' }),
  ),
  analysis: Type.Optional(CallAnalysisSchema),
});

/** What the call list routes touch: the call views. */
export interface CallListRouteDeps {
  views: CallViews;
}

export function callListRoutes(app: App, { views }: CallListRouteDeps) {
  app.get(
    '/api/calls',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['calls'],
        ...docs.listCalls,
        querystring: Type.Object({
          before: Type.Optional(Type.String({ maxLength: 100 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
        }),
        response: { 200: ok(CallPage, 'A page of calls', examples.listCalls) },
      },
    },
    async (request) => {
      const query = request.query as { before?: string; limit?: number };
      return views.list(request.auth!.userId, { before: query.before, limit: query.limit ?? 20 });
    },
  );

  app.get(
    '/api/calls/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['calls'],
        ...docs.getCall,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: {
          200: ok(CallDetail, 'The call', examples.getCall),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => views.get(request.auth!.userId, (request.params as { id: string }).id),
  );

  app.get(
    '/api/calls/:id/recording',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['calls'],
        ...docs.getCallRecording,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        produces: ['audio/wav'],
        response: {
          200: Type.String({ format: 'binary', description: 'The WAV file' }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request, reply) => {
      const wav = await views.recording(request.auth!.userId, (request.params as { id: string }).id);
      return reply.type('audio/wav').header('cache-control', 'private, no-store').send(wav);
    },
  );
}
