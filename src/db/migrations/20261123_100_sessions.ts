// Call sessions started by POST /api/session/call remember a hash of their
// request (user and jwt), so a request replayed under the same Idempotency-Key
// can answer the same X-Session-Id (docs/decisions/calls.md).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('call_sessions').addColumn('request_hash', 'text').execute();
  await db.schema
    .createIndex('call_sessions_request')
    .on('call_sessions')
    .columns(['user_id', 'request_hash'])
    .execute();
}
