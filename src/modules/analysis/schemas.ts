// The shapes of post-call analysis (DESIGN.md "Post-call analysis and
// analytics"), defined once: the result on GET /api/calls/{id} and in the
// calls-store record, the `performance-metrics` and `tasks` records, and the
// `call_analysis` event (the webhook's `data` is the same).
import { type Static, Type } from 'typebox';

const closed = { additionalProperties: false };

export const AnalysisTaskSchema = Type.Object(
  {
    title: Type.String({ description: 'What is left to do' }),
    dueDate: Type.Optional(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' })),
  },
  closed,
);

/** A sandbox analysis of a clinic call (the OpenAPI examples). */
export const EXAMPLE_ANALYSIS = {
  status: 'completed' as const,
  summary: 'The caller asked about opening hours (answered) and booked a meeting on 2026-12-04 at 10:00.',
  success: true,
  successReason: 'a meeting was booked',
  data: { preferred_day: '2026-12-04' },
  tasks: [] as Array<{ title: string; dueDate?: string }>,
  sentiment: 'positive' as const,
  by: 'sandbox' as const,
  analysedAt: '2026-12-03T10:01:00.000Z',
} as const;

export const CallAnalysisSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
    summary: Type.Union([Type.String(), Type.Null()], {
      description: 'What the call was about and what was done; null when the agent asks for no summary or it failed',
    }),
    success: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: not decidable (or failed)' }),
    successReason: Type.Optional(Type.String()),
    data: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
      description: "The fields of the agent's `analysis.schema` the call gave (validated against it)",
    }),
    tasks: Type.Array(AnalysisTaskSchema),
    sentiment: Type.Optional(Type.Union([Type.Literal('positive'), Type.Literal('neutral'), Type.Literal('negative')])),
    by: Type.Union([Type.Literal('model'), Type.Literal('sandbox')], {
      description: '`sandbox`: the deterministic offline analyser (no LLM_URL)',
    }),
    reason: Type.Optional(Type.String({ description: 'Why it failed (status failed)' })),
    analysedAt: Type.String({ format: 'date-time' }),
  },
  {
    ...closed,
    $id: 'CallAnalysis',
    description: "A call's post-call analysis",
    examples: [EXAMPLE_ANALYSIS],
  },
);
export type CallAnalysis = Static<typeof CallAnalysisSchema>;
export type AnalysisTask = Static<typeof AnalysisTaskSchema>;

/** One record per call in the `performance-metrics` store. */
export interface PerformanceMetric {
  sessionId: string;
  agent: { id?: string; name: string };
  campaignId?: string;
  direction: string;
  outcome: string | null;
  durationSeconds: number;
  costUsd: number;
  turns: number;
  interruptions: number;
  latency: { p50Ms: number | null; p95Ms: number | null };
  success: boolean | null;
}

/** One record per task in the `tasks` store. */
export interface TaskRecord {
  title: string;
  dueDate?: string;
  sessionId: string;
  contact: { name?: string; phone?: string };
}

export const CallAnalysisEvent = Type.Object(
  {
    session_id: Type.String(),
    status: Type.Union([Type.Literal('completed'), Type.Literal('failed')]),
    success: Type.Union([Type.Boolean(), Type.Null()]),
    at: Type.String({ format: 'date-time', description: 'When the analysis was written' }),
  },
  {
    $id: 'CallAnalysisEvent',
    ...closed,
    description:
      'Payload of `call_analysis`: a call\'s post-call analysis was written (GET /api/calls/{id} has it); also the `data` of the call\'s webhook `{ type: "call_analysis", timestamp, data }`.',
    examples: [
      {
        session_id: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
        status: 'completed',
        success: true,
        at: '2026-12-03T10:01:00.000Z',
      },
    ],
  },
);
