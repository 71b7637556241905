// Agent tests as data (DESIGN.md "Agent tests"): the test, its caller, its
// expectations, and a run's results, defined once for validation, types and
// the OpenAPI document.
import { type Static, Type } from 'typebox';

const Phrase = Type.String({ minLength: 1, maxLength: 500 });

export const TestCaller = Type.Union(
  [
    Type.Object(
      {
        lines: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
          minItems: 1,
          maxItems: 50,
          description: "The caller's lines, in order: each is one caller turn, answered by the agent before the next",
        }),
      },
      { additionalProperties: false, title: 'ScriptedCaller' },
    ),
    Type.Object(
      {
        goal: Type.String({
          minLength: 1,
          maxLength: 2000,
          description:
            'What the caller wants; a configured language model (LLM_URL) plays the caller until the goal is reached, the agent ends the call or maxTurns',
        }),
        persona: Type.Optional(Type.String({ maxLength: 2000, description: 'Who the caller is and how they talk' })),
      },
      { additionalProperties: false, title: 'GoalCaller' },
    ),
  ],
  { description: 'Who calls: scripted lines, or a goal for a model that plays the caller' },
);

export const ExpectedToolCall = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'A partial match: every field given must be in the call with an equal value (objects compared the same way, recursively; strings case-insensitively)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TestExpectations = Type.Object(
  {
    outcome: Type.Optional(
      Type.String({
        maxLength: 50,
        description:
          'How the conversation ended: `completed` (the agent or the caller ended it), `transferred`, `max_duration` (maxTurns reached first), `provider_error`, `pathway_error`',
      }),
    ),
    toolCalls: Type.Optional(
      Type.Array(ExpectedToolCall, {
        maxItems: 50,
        description: 'Tools the agent must call, each matched by a different call, in any order',
      }),
    ),
    noToolCalls: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, description: 'Tools never called' }),
    ),
    says: Type.Optional(
      Type.Array(Phrase, {
        maxItems: 50,
        description: 'Phrases the agent says at some point (case, punctuation and spacing ignored)',
      }),
    ),
    neverSays: Type.Optional(Type.Array(Phrase, { maxItems: 50, description: 'Phrases the agent never says' })),
    variables: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "The pathway's variables at the end, each equal (others may be set too)",
      }),
    ),
    path: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 200,
        description: 'Pathway node ids visited in this order (others may come between them)',
      }),
    ),
    analysis: Type.Optional(
      Type.Object(
        {
          success: Type.Optional(Type.Boolean()),
          data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'A partial match of `data`' })),
        },
        {
          additionalProperties: false,
          description: "The post-call analysis of the conversation (the agent's `analysis` settings)",
        },
      ),
    ),
    maxTurns: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 50,
        description: 'At most this many caller turns (a goal caller stops here)',
      }),
    ),
    maxLatencyMs: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 600_000, description: "Every agent answer's latency at most this (ms)" }),
    ),
  },
  { additionalProperties: false },
);

export const AgentTestInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    agent: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'An agent record (as in the `agents` store: `{ name, prompt?, firstMessage?, ... }`)',
      }),
    ),
    agentId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'An object of your `agents` store' }),
    ),
    pathway: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "Replaces the agent's pathway: a document or `{ id }`",
      }),
    ),
    pathwayId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    knowledgeBaseId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    integrations: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
    mode: Type.Optional(
      Type.Union([Type.Literal('text'), Type.Literal('voice')], {
        description:
          '`text` (default): no audio, in well under a second; `voice`: a free web call of the agent at real pace, the lines spoken and recognised (needs caller.lines and sideEffects live; counts as a web call)',
      }),
    ),
    sideEffects: Type.Optional(
      Type.Union([Type.Literal('sandbox'), Type.Literal('live')], {
        description:
          '`sandbox` (default): integrations run against their sandboxes and custom tools are not sent; `live`: as on a call',
      }),
    ),
    caller: TestCaller,
    expect: TestExpectations,
  },
  { additionalProperties: false },
);
export type AgentTestInput = Static<typeof AgentTestInput>;
export type TestExpectations = Static<typeof TestExpectations>;

export const AgentTest = Type.Object(
  {
    id: Type.String(),
    ...AgentTestInput.properties,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'AgentTest' },
);
export type AgentTest = Static<typeof AgentTest>;

export const RunStatus = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('passed'),
    Type.Literal('failed'),
    Type.Literal('error'),
  ],
  { description: '`error`: the test could not run (its agent is gone, a provider failed), as against `failed` checks' },
);

export const Check = Type.Object({
  name: Type.String({ description: 'The expectation: `outcome`, `toolCalls[0]`, `says[1]`, `path`, ...' }),
  passed: Type.Boolean(),
  expected: Type.Unknown(),
  actual: Type.Unknown(),
});
export type Check = Static<typeof Check>;

export const TranscriptLine = Type.Object({
  role: Type.Union([Type.Literal('agent'), Type.Literal('caller')]),
  text: Type.String(),
  latencyMs: Type.Optional(Type.Number()),
  node: Type.Optional(Type.String()),
});

export const TestResult = Type.Object({
  testId: Type.String(),
  name: Type.String(),
  status: RunStatus,
  checks: Type.Array(Check),
  transcript: Type.Array(TranscriptLine),
  toolCalls: Type.Array(Type.Object({ name: Type.String(), arguments: Type.Unknown(), result: Type.Unknown() })),
  outcome: Type.Optional(Type.String()),
  path: Type.Optional(Type.Array(Type.String())),
  variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  analysis: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String()),
  durationMs: Type.Union([Type.Number(), Type.Null()]),
});
export type TestResult = Static<typeof TestResult>;

export const TestRun = Type.Object(
  {
    runId: Type.String(),
    status: RunStatus,
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    summary: Type.Object({
      total: Type.Integer(),
      passed: Type.Integer(),
      failed: Type.Integer(),
      error: Type.Integer(),
    }),
    results: Type.Array(TestResult),
  },
  { title: 'AgentTestRun' },
);
export type TestRun = Static<typeof TestRun>;
