// One ledger for every "accepted once" token (phone price tokens, signed
// payload jtis, temporary-session keys): its primary key decides, across
// requests and instances, which use is the first. Replaces the two tables of
// migrations 030 and 040; rows still in force are carried over.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('single_use_tokens')
    /** What kind of token: 'phone-price', 'signed-payload', 'temporary-session'. */
    .addColumn('purpose', 'text', (c) => c.notNull())
    /** The token's identity within its purpose (a jti, or a JSON array naming it). */
    .addColumn('id', 'text', (c) => c.notNull())
    /** After this the token is refused anyway, so the row may go. */
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('single_use_tokens_pk', ['purpose', 'id'])
    .execute();
  await db.schema.createIndex('single_use_tokens_expiry').on('single_use_tokens').column('expires_at').execute();

  await sql`insert into single_use_tokens (purpose, id, expires_at, used_at)
    select 'phone-price', jti, expires_at, expires_at from phone_price_tokens`.execute(db);
  // The id of a signed payload's jti is the JSON array [user, server, jti], as SignedPayloads writes it.
  const uses = await db
    .selectFrom('signed_payload_uses')
    .select(['user_id', 'server', 'jti', 'expires_at', 'used_at'])
    .execute();
  for (const row of uses) {
    await db
      .insertInto('single_use_tokens')
      .values({
        purpose: 'signed-payload',
        id: JSON.stringify([row.user_id, row.server, row.jti]),
        expires_at: row.expires_at,
        used_at: row.used_at,
      })
      .execute();
  }
  await db.schema.dropTable('phone_price_tokens').execute();
  await db.schema.dropTable('signed_payload_uses').execute();
}
