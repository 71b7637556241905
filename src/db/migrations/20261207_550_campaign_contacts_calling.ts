// The dialer's sweep (every 15 s on every instance) looks for contacts left
// `calling`: claims whose lease ended before their call was recorded
// (CampaignStore.returnExpiredClaims) and calls under way for longer than
// their end should take (longCalling). Both scanned every contact of every
// campaign; the contacts calling at a time are few (at most the campaigns'
// concurrency), so a partial index of them is small and both read only it.
// The queries spell the condition as this index does, status = 'calling' as a
// literal, so that the statement's text alone implies it (a partial index is
// used only then in a PostgreSQL generic plan or a SQLite build without
// STAT4). session_id leads: SQLite (no ANALYZE) otherwise took the plain
// session_id index for `session_id is null`, which holds most contacts.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('campaign_contacts_calling')
    .on('campaign_contacts')
    .columns(['session_id', 'claimed_until', 'updated_at'])
    .where(sql.ref('status'), '=', sql.lit('calling'))
    .execute();
}
