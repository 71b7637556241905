// Post-call analysis (DESIGN.md "Post-call analysis and analytics"): what the
// analytics route counts, kept on the call's own row so that no record is
// decrypted to answer it (the agent, whether the call succeeded, what it
// cost, its answer latency, and `tally`: what the call counts as, in bits,
// so that counting is grouping, not a test per row), the state of its
// analysis, and the `performance-metrics` record it wrote (a re-run replaces
// that record). The index covers the analytics queries: they read no row.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, type] of [
    ['agent_id', 'text'],
    ['success', 'integer'],
    ['cost_cents', 'integer'],
    ['latency_p50_ms', 'integer'],
    ['latency_p95_ms', 'integer'],
    ['tally', 'integer'],
    ['analysis_status', 'text'],
    ['metrics_object_id', 'text'],
    ['tasks_written_at', 'bigint'],
  ] as const)
    await db.schema.alterTable('call_sessions').addColumn(name, type).execute();
  await db.schema
    .createIndex('call_sessions_analytics')
    .on('call_sessions')
    .columns([
      'user_id',
      'created_at',
      'tally',
      'agent_id',
      'direction',
      'outcome',
      'status',
      'duration_seconds',
      'cost_cents',
      'latency_p50_ms',
      'latency_p95_ms',
    ])
    .execute();
}
