// Agent tests (DESIGN.md "Agent tests"): tests as data, runs as jobs, results
// as JSON or a JUnit XML report.
import { Type } from 'typebox';
import { errorResponses, IdParams, OPTIONAL_BODY, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { junitReport } from './junit.js';
import { AgentTest, AgentTestInput, RunStatus, TestRun } from './schemas.js';
import type { AgentTestService } from './service.js';
import { docs, examples } from './routes.docs.js';

const LastResult = Type.Union([
  Type.Object({
    runId: Type.String(),
    status: RunStatus,
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    failedChecks: Type.Array(
      Type.Object({ name: Type.String(), passed: Type.Boolean(), expected: Type.Unknown(), actual: Type.Unknown() }),
    ),
  }),
  Type.Null(),
]);
const TestWithLast = Type.Object({ ...AgentTest.properties, lastResult: LastResult });
const RunStarted = Type.Object({ runId: Type.String() });
const RunParams = Type.Object({ runId: Type.String({ minLength: 1, maxLength: 100 }) });

export interface AgentTestRouteDeps {
  agentTests: AgentTestService;
}

export function agentTestRoutes(app: App, deps: AgentTestRouteDeps) {
  const { agentTests } = deps;
  const tags = ['agent-tests'];

  app.post(
    '/api/agent-tests',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.createAgentTest,
        body: { ...AgentTestInput, examples: [examples.createAgentTestBody] },
        response: {
          201: ok(AgentTest, 'The test', examples.agentTest),
          ...errorResponses('invalid_input', 'quota_exceeded'),
        },
      },
    },
    async (request, reply) => reply.status(201).send(await agentTests.create(request.auth!.userId, request.body)),
  );

  app.get(
    '/api/agent-tests',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.listAgentTests,
        response: {
          200: ok(Type.Array(TestWithLast), 'Your tests', examples.listAgentTests),
        },
      },
    },
    async (request) => agentTests.list(request.auth!.userId),
  );

  app.post(
    '/api/agent-tests/runs',
    {
      config: { auth: 'verified' },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        ...docs.runAgentTests,
        body: Type.Object(
          {
            testIds: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 1000 }),
            ),
          },
          { additionalProperties: false, examples: examples.runAgentTestsBody, [OPTIONAL_BODY]: true },
        ),
        response: {
          202: ok(RunStarted, 'The run is queued', examples.runAgentTests),
          ...errorResponses('invalid_input', 'not_found', 'concurrency_limit'),
        },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await agentTests.startRun(request.auth!.userId, request.body.testIds)),
  );

  app.get(
    '/api/agent-tests/runs/:runId',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.getAgentTestRun,
        params: RunParams,
        produces: ['application/json', 'application/xml'],
        response: { 200: ok(TestRun, 'The run', examples.getAgentTestRun), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      const run = await agentTests.getRun(request.auth!.userId, request.params.runId);
      if (prefersXml(request.headers.accept))
        return reply.type('application/xml; charset=utf-8').send(junitReport(run));
      return run;
    },
  );

  app.get(
    '/api/agent-tests/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.getAgentTest,
        params: IdParams,
        response: { 200: ok(AgentTest, 'The test', examples.agentTest), ...errorResponses('not_found') },
      },
    },
    async (request) => agentTests.get(request.auth!.userId, request.params.id),
  );

  app.put(
    '/api/agent-tests/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.updateAgentTest,
        params: IdParams,
        body: { ...AgentTestInput, examples: [examples.createAgentTestBody] },
        response: {
          200: ok(AgentTest, 'The test', examples.agentTest),
          ...errorResponses('invalid_input', 'not_found'),
        },
      },
    },
    async (request) => agentTests.update(request.auth!.userId, request.params.id, request.body),
  );

  app.delete(
    '/api/agent-tests/:id',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        ...docs.deleteAgentTest,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await agentTests.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/agent-tests/:id/runs',
    {
      config: { auth: 'verified' },
      schema: {
        tags,
        ...docs.runAgentTest,
        params: IdParams,
        response: {
          202: ok(RunStarted, 'The run is queued', examples.runAgentTest),
          ...errorResponses('not_found', 'concurrency_limit'),
        },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await agentTests.startRun(request.auth!.userId, [request.params.id])),
  );
}

/** XML when the client asks for it before (or instead of) JSON. */
function prefersXml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => {
    const [type, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { type: type!.trim().toLowerCase(), q: q ? Number(q.slice(2)) : 1 };
  });
  const q = (names: string[]) => Math.max(0, ...types.filter((t) => names.includes(t.type)).map((t) => t.q));
  const xml = q(['application/xml', 'text/xml']);
  return xml > 0 && xml >= q(['application/json', '*/*', 'application/*']);
}
