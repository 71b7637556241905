// Signed payloads (single-use jti ledger, shared by persona previews and call
// sessions) and scheduling integrations.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  // One row per accepted jti of a registered server; the primary key is what
  // makes "accepted once" hold across concurrent requests and instances.
  await db.schema
    .createTable('signed_payload_uses')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('signed_payload_uses_pk', ['user_id', 'server', 'jti'])
    .execute();
  await db.schema.createIndex('signed_payload_uses_expiry').on('signed_payload_uses').column('expires_at').execute();

  await db.schema
    .createTable('integrations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    // The sanitized payload (spec 2.16) as JSON, without the token.
    .addColumn('data', 'text', (c) => c.notNull())
    // The access token sealed with the master key (SecretBox).
    .addColumn('sealed_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('integrations_user').on('integrations').columns(['user_id', 'created_at']).execute();
}
