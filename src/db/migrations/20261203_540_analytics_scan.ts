// The covering index of GET /api/analytics/calls again (migration 510 made
// the first), for a cheaper read of a range: it also holds campaign_id (a
// campaign grouping or filter read every call's row through the old one), and
// it lists the fixed-width integer columns every query reads right after the
// range's columns, the text keys after them, so that reading an entry stops
// early on both databases (SQLite walks a record's header, PostgreSQL
// deforms an index tuple column by column; text columns have no fixed offset).
// And `analysis_job_id`: the job that holds the call's analysis, taken with
// a conditional update, so that two jobs for one call never both write it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('call_sessions').addColumn('analysis_job_id', 'text').execute();
  await db.schema.dropIndex('call_sessions_analytics').execute();
  await db.schema
    .createIndex('call_sessions_analytics_scan')
    .on('call_sessions')
    .columns([
      'user_id',
      'created_at',
      'tally',
      'duration_seconds',
      'cost_cents',
      'latency_p50_ms',
      'latency_p95_ms',
      'agent_id',
      'campaign_id',
      'direction',
      'outcome',
      'status',
    ])
    .execute();
}
