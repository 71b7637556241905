// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

const exampleBucket = {
  calls: 42,
  answered: 38,
  completed: 30,
  voicemail: 4,
  transferred: 3,
  failed: 2,
  successRate: 0.7333,
  avgDurationSeconds: 74.5,
  costUsd: 3.12,
  latencyP50Ms: 620,
  latencyP95Ms: 1180,
};

export const docs = describeRoutes({
  rerunCallAnalysis: {
    summary: "Analyse an ended call again (with the agent's analysis settings of the call)",
    description:
      'Queues the analysis of the call again; when it is written, GET /api/calls/{id} has the new `analysis`, its `performance-metrics` record is replaced, and a `call_analysis` event (and, for a call with a `webhook`, a delivery) follows. Tasks are written only by the first analysis that finds some. 404 when the call is not yours, 409 `conflict` while it has not ended.',
  },
  callAnalytics: {
    summary: 'Your calls counted by day, agent, campaign, outcome or direction',
    description:
      "Counted from the server's own call rows (no record is decrypted), so it answers quickly for many calls. `from` and `to` are dates (YYYY-MM-DD, whole days in `tz`, both included) or ISO 8601 times (`to` excluded); default the last 30 days, at most 400. `tz` is an IANA time zone (default UTC): the day a call belongs to is its start's day there, daylight saving time included. `groupBy=day` lists every day of the range, calls or not, oldest first; other groupings list their keys by calls, most first. Success rate, cost and latency come with the call's analysis (a few seconds after it ends). 400 for an unknown time zone, a range that is empty or too long.",
  },
});

export const examples = {
  rerunCallAnalysis: { status: 'queued' as const },
  callAnalytics: {
    groupBy: 'day',
    tz: 'Europe/Berlin',
    from: '2026-11-30T23:00:00.000Z',
    to: '2026-12-02T23:00:00.000Z',
    buckets: [
      { key: '2026-12-01', ...exampleBucket },
      { key: '2026-12-02', ...exampleBucket },
    ],
    totals: {
      ...exampleBucket,
      calls: 84,
      answered: 76,
      completed: 60,
      voicemail: 8,
      transferred: 6,
      failed: 4,
      costUsd: 6.24,
    },
  },
};
