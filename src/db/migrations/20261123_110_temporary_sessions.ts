// Temporary test calls (spec 3.4, docs/decisions/temporary-sessions.md): the
// session a submitted key started (for its summary email) and the leases of
// the operator's temporary numbers. The key itself is spent in the
// single-use token ledger (migration 150).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('temporary_sessions')
    /** The call session's id. */
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** Set when the summary email is claimed for sending; null again if sending failed. */
    .addColumn('summary_sent_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('temporary_sessions_pending')
    .on('temporary_sessions')
    .columns(['summary_sent_at', 'created_at'])
    .execute();

  // One row per number in use; a lease past expires_at may be taken over (its call ended without telling us).
  await db.schema
    .createTable('temporary_number_leases')
    .addColumn('number', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('leased_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('temporary_number_leases_session')
    .on('temporary_number_leases')
    .column('session_id')
    .execute();
}
