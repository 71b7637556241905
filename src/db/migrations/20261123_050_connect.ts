// Connector jobs that hold lead credits (POST /api/connect on /get-leads):
// what was granted and reserved, and how many leads were delivered so far, so
// a job cut off by a crash is settled at the next start for what it delivered.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connect_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    /** 'running', then 'settling' (claimed by one conditional update; the charge is under way), then 'settled'. */
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('granted', 'integer', (c) => c.notNull())
    /** Of the granted credits, those covered by the plan's allowance (not charged). */
    .addColumn('free_credits', 'integer', (c) => c.notNull())
    .addColumn('price_cents', 'integer', (c) => c.notNull())
    /** Cents held in the ledger under reservation ref `connect:{id}` (0 when the allowance covered all). */
    .addColumn('reserved_cents', 'integer', (c) => c.notNull())
    .addColumn('delivered', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** Bumped with every batch written: a running job not touched for long was abandoned. */
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('connect_jobs_state_updated')
    .on('connect_jobs')
    .columns(['state', 'updated_at'])
    .execute();
}
