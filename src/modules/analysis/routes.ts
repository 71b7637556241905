// Routes of post-call analysis and analytics: the re-run of a call's
// analysis and GET /api/analytics/calls. Thin: parse, call one service
// method, answer.
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { AnalyticsService } from './analytics.js';
import type { AnalysisService } from './service.js';
import { docs, examples } from './routes.docs.js';

export interface AnalysisRouteDeps {
  analysis: AnalysisService;
  analytics: AnalyticsService;
}

const Bucket = {
  calls: Type.Integer({ description: 'Calls started in the bucket' }),
  answered: Type.Integer({ description: 'Calls whose media connected (someone, or a machine, answered)' }),
  completed: Type.Integer({ description: 'Calls that ended `completed`' }),
  voicemail: Type.Integer(),
  transferred: Type.Integer(),
  failed: Type.Integer({ description: 'Calls that ended with status `failed`' }),
  successRate: Type.Union([Type.Number(), Type.Null()], {
    description: 'Successful calls among those whose analysis decided success (0-1); null when none did',
  }),
  avgDurationSeconds: Type.Union([Type.Number(), Type.Null()], { description: 'Of ended calls; null when none ended' }),
  costUsd: Type.Number({ description: 'What the calls were charged, transfer legs included' }),
  latencyP50Ms: Type.Union([Type.Integer(), Type.Null()], {
    description:
      "The median of the calls' median answer latency (end of caller speech to agent audio), 10 ms resolution",
  }),
  latencyP95Ms: Type.Union([Type.Integer(), Type.Null()], {
    description: "The 95th percentile of the calls' 95th-percentile answer latency, 10 ms resolution",
  }),
};

const AnalyticsAnswer = Type.Object({
  groupBy: Type.String(),
  tz: Type.String(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time', description: 'Excluded' }),
  buckets: Type.Array(
    Type.Object({
      key: Type.Union([Type.String(), Type.Null()], {
        description:
          'The day (YYYY-MM-DD in `tz`), the agent (its `agents` store id, or the name of an inline agent), the campaign id, the outcome (or final status) or the direction; null: calls with none',
      }),
      ...Bucket,
    }),
  ),
  totals: Type.Object(Bucket),
});

export function analysisRoutes(app: App, deps: AnalysisRouteDeps) {
  const { analysis, analytics } = deps;

  app.post(
    '/api/calls/:id/analysis',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['analytics'],
        ...docs.rerunCallAnalysis,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: {
          202: ok(Type.Object({ status: Type.Literal('queued') }), 'Queued', examples.rerunCallAnalysis),
          ...errorResponses('not_found', 'conflict'),
        },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return analysis.rerun(request.auth!.userId, (request.params as { id: string }).id);
    },
  );

  app.get(
    '/api/analytics/calls',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['analytics'],
        ...docs.callAnalytics,
        querystring: Type.Object({
          from: Type.Optional(Type.String({ maxLength: 40, examples: ['2026-11-01'] })),
          to: Type.Optional(Type.String({ maxLength: 40, examples: ['2026-11-30'] })),
          groupBy: Type.Optional(
            Type.Union(
              ['day', 'agent', 'campaign', 'outcome', 'direction'].map((g) => Type.Literal(g)),
              { default: 'day' },
            ),
          ),
          tz: Type.Optional(Type.String({ maxLength: 64, examples: ['Europe/Berlin'] })),
          agentId: Type.Optional(
            Type.String({ maxLength: 200, description: 'Only this agent (a bucket key of groupBy=agent)' }),
          ),
          campaignId: Type.Optional(Type.String({ maxLength: 100 })),
        }),
        response: {
          200: ok(AnalyticsAnswer, 'The buckets and their totals', examples.callAnalytics),
          ...errorResponses('invalid_input'),
        },
      },
    },
    async (request) => analytics.calls(request.auth!.userId, request.query as Parameters<AnalyticsService['calls']>[1]),
  );
}
