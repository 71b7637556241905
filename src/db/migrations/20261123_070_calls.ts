// Call sessions, their progress reports, and outbound webhook deliveries with
// each user's signing secret (DESIGN "Calls", docs/decisions/calls.md).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    /** `whsec_…` sealed with the master key. */
    .addColumn('secret', 'text', (c) => c.notNull())
    /** The secret before the last rotation, still signing for a day after it; null when never rotated. */
    .addColumn('previous_secret', 'text')
    .addColumn('rotated_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    /** Also the `webhook-id` header: receivers deduplicate on it. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    /** The exact JSON body sent on every attempt. */
    .addColumn('body', 'text', (c) => c.notNull())
    /** pending → delivered | failed. */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    /** When the next attempt is due; while an attempt runs, when its lease ends. */
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_user')
    .on('webhook_deliveries')
    .columns(['user_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('call_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** created → queued → ringing → in_progress → completed | failed | busy | no_answer | canceled. */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    /** JSON: the parts of the assembled call the call record keeps (to, from, agent name). */
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('provider_call_id', 'text')
    .addColumn('duration_seconds', 'integer')
    /** Set once the end of the call is accounted for (usage and call record). */
    .addColumn('finished_at', 'bigint')
    .addColumn('record_object_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('call_sessions_user').on('call_sessions').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('call_progress')
    /** The report's `webhook-id`: a replayed report is recognized and changes nothing. */
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('call_progress_session')
    .on('call_progress')
    .columns(['session_id', 'received_at'])
    .execute();
}
