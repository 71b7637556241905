// PostgreSQL keeps a row over about 2 KB small by compressing its long
// values or moving them out of line, into the table's TOAST table. The
// object_created event of a 1 KiB object is about 2.3 KB of JSON (the
// ciphertext again, as hex), so every create's event went out of line: two
// more heap rows and two index entries in the TOAST table, after a pglz
// attempt that never pays (ciphertext and its hex do not compress). Measured
// on the events insert alone: about 112-138 µs of the database backend's CPU
// per event, 76-82 µs inline. Rows up to a page (8160 bytes) now stay inline
// and whole; longer values (a call recording) go out of line uncompressed.
// Nothing to do on SQLite, which stores a row's overflow in the same file.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const [table, column] of [
    ['events', 'payload'],
    ['objects', 'content'],
  ] as const) {
    await sql`alter table ${sql.table(table)} set (toast_tuple_target = 8160)`.execute(db);
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set storage external`.execute(db);
  }
}
