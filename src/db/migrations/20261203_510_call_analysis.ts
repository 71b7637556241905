// Post-call analysis (DESIGN.md "Post-call analysis and analytics"): what the
// analytics route counts, kept on the call's own row so that no record is
// decrypted to answer it (the agent, whether the call succeeded, what it
// cost, its answer latency), the state of its analysis, and the
// `performance-metrics` record it wrote (a re-run replaces that record).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, type] of [
    ['agent_id', 'text'],
    ['success', 'integer'],
    ['cost_cents', 'integer'],
    ['latency_p50_ms', 'integer'],
    ['latency_p95_ms', 'integer'],
    ['analysis_status', 'text'],
    ['metrics_object_id', 'text'],
    ['tasks_written_at', 'bigint'],
  ] as const)
    await db.schema.alterTable('call_sessions').addColumn(name, type).execute();
}
