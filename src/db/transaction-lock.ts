// One transaction at a time per key (a user's charges, web calls, quota...):
// PostgreSQL takes a transaction-scoped advisory lock on the key's hash,
// released when the transaction commits or rolls back; SQLite needs nothing,
// as it runs one write transaction at a time.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';

/** Waits until no other transaction holds `key`, then holds it until the transaction `trx` ends. */
export async function lockForTransaction(trx: Kysely<Database>, dialect: Dialect, key: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}
