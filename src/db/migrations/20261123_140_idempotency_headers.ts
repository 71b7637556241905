// A stored Idempotency-Key answer keeps the response headers its route
// documents (e.g. X-Session-Id, X-Objects-Written), so a replay carries them too.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  /** JSON object of header name → value; null when the route documents none. */
  await db.schema.alterTable('idempotency_keys').addColumn('headers', 'text').execute();
}
