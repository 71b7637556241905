// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import type { AgentTestInput } from './schemas.js';

const BODY_DOC = [
  "A test: an agent (`agentId`, an object of your `agents` store, or `agent`, an agent record inline), optionally `pathway`/`pathwayId`, `knowledgeBaseId` and `integrations` that replace the agent's; a `caller` (`lines`, each one caller turn; or a `goal` with an optional `persona` for a model that plays the caller, which needs LLM_URL); and `expect`:",
  '',
  '- `outcome`: `completed` (the agent ended the call, or the caller ran out of lines), `transferred`, `max_duration` (stopped by `maxTurns`), `provider_error`, `pathway_error`;',
  '- `toolCalls`: `[{ name, arguments? }]`, each matched by a different call; `arguments` is a partial match (only the fields given, objects recursively, strings case-insensitively); `noToolCalls`: names never called;',
  '- `says` / `neverSays`: phrases, case, punctuation and spacing ignored;',
  "- `variables`: the pathway's variables at the end; `path`: node ids visited in this order (others may come between);",
  '- `analysis`: `{ success?, data? }` of the post-call analysis; `maxTurns`: caller turns at most; `maxLatencyMs`: every agent answer within it.',
  '',
  '`mode`: `text` (the default: the caller\'s lines go to the agent\'s turn logic as text; the model, or the sandbox dialogue engine, answers through the same tools and pathway walk as a call) or `voice` (a free web call at real pace, the lines spoken and recognised; needs `sideEffects: "live"`). `sideEffects`: `sandbox` (the default: scheduling runs against the sandbox calendar, custom HTTP tools and webhook nodes are not sent and answer an error saying so) or `live` (as on a call).',
].join('\n');
const exampleInput: AgentTestInput = {
  name: 'Books a meeting on Tuesday',
  agent: {
    name: 'Amy',
    firstMessage: 'Hello, this is Amy from the clinic. How can I help?',
    integrations: ['0193a0d2-7c1e-7b3a-9f10-3c5d2e8b1a42'],
  },
  caller: { lines: ['Hi, I would like to book a meeting next Tuesday.', "That's all, goodbye."] },
  expect: {
    outcome: 'completed',
    toolCalls: [{ name: 'check_availability' }, { name: 'book_meeting' }],
    says: ['booked'],
    neverSays: ["I can't book"],
    maxTurns: 4,
    maxLatencyMs: 2000,
  },
};
const exampleTest = {
  id: '019ae0c1-2b3c-7d4e-8f50-6172839a4b5c',
  ...exampleInput,
  createdAt: '2026-12-03T10:00:00.000Z',
  updatedAt: '2026-12-03T10:00:00.000Z',
};
const exampleRun = {
  runId: '019ae0c2-0a1b-7c2d-8e3f-405162738495',
  status: 'failed' as const,
  createdAt: '2026-12-03T10:01:00.000Z',
  finishedAt: '2026-12-03T10:01:00.412Z',
  summary: { total: 1, passed: 0, failed: 1, error: 0 },
  results: [
    {
      testId: exampleTest.id,
      name: exampleTest.name,
      status: 'failed' as const,
      outcome: 'completed',
      checks: [
        { name: 'outcome', passed: true, expected: 'completed', actual: 'completed (agent_ended)' },
        {
          name: 'toolCalls[0]',
          passed: true,
          expected: { name: 'check_availability' },
          actual: { name: 'check_availability', arguments: { date: '2026-12-08' } },
        },
        {
          name: 'toolCalls[1]',
          passed: false,
          expected: { name: 'book_meeting' },
          actual: ['check_availability', 'end_call'],
        },
      ],
      transcript: [
        { role: 'agent' as const, text: 'Hello, this is Amy from the clinic. How can I help?' },
        { role: 'caller' as const, text: 'Hi, I would like to book a meeting next Tuesday.' },
        { role: 'agent' as const, text: 'Tuesday 8 December is fully booked, sorry.', latencyMs: 3 },
      ],
      toolCalls: [{ name: 'check_availability', arguments: { date: '2026-12-08' }, result: { slots: [] } }],
      durationMs: 21,
    },
  ],
};

export const docs = describeRoutes({
  createAgentTest: {
    summary: 'Create an agent test: a simulated conversation and what it must show',
    description: `${BODY_DOC}\n\n400 \`invalid_input\` for both or neither of agent and agentId, a goal without a model, or \`mode: "voice"\` without \`caller.lines\` and \`sideEffects: "live"\`. What the test names (agent, knowledge base, pathway) is looked up when it runs: a test whose agent is gone ends \`error\`.`,
  },
  listAgentTests: {
    summary: 'Your agent tests, each with its last result',
    description:
      'Oldest first. `lastResult` is the latest finished result of the test (null: never run), with its failed checks.',
  },
  runAgentTests: {
    summary: 'Run a suite: the tests named, or all of yours',
    description:
      'Queues a run (202). Each test runs as a job (on any instance; a test whose instance stopped runs again); follow it with `agent_test_run` events or GET /api/agent-tests/runs/{runId}. Never charged. 404 for a test that is not yours; 400 when you have none; 429 `concurrency_limit` when 20 of your runs are queued or running.',
  },
  getAgentTestRun: {
    summary: 'A run and its results; a JUnit XML report with Accept: application/xml',
    description:
      "`status`: `queued`, `running`, then `passed` (every check of every test), `failed` (a check failed) or `error` (a test could not run). Each result has every check's `expected` and `actual`, the transcript (agent lines with their `latencyMs`), the tool calls with arguments and results, and the pathway's `path` and `variables`. With `Accept: application/xml` the same run as a JUnit XML report (a testcase per test; failed checks in `<failure>`, a test that could not run in `<error>`, unfinished ones `<skipped>`). 404 when the run is not yours.",
  },
  getAgentTest: {
    summary: 'One agent test',
    description: 'The test as it was written (its agent, caller and expectations); 404 when it is not yours.',
  },
  updateAgentTest: {
    summary: 'Replace an agent test',
    description: 'The whole test, as for POST. Results of earlier runs stay.',
  },
  deleteAgentTest: {
    summary: 'Delete an agent test',
    description: 'Its past results stay in their runs.',
  },
  runAgentTest: {
    summary: 'Run one agent test',
    description: 'As POST /api/agent-tests/runs with this one test. 404 when it is not yours.',
  },
});

export const examples = {
  agentTest: exampleTest,
  getAgentTestRun: exampleRun,
  createAgentTestBody: exampleInput,
  runAgentTestsBody: [{ testIds: [exampleTest.id] }, {}],
  listAgentTests: [
    {
      ...exampleTest,
      lastResult: {
        runId: exampleRun.runId,
        status: 'failed' as const,
        finishedAt: exampleRun.finishedAt,
        failedChecks: [exampleRun.results[0]!.checks[2]!],
      },
    },
  ],
  runAgentTests: { runId: exampleRun.runId },
  runAgentTest: { runId: exampleRun.runId },
};
