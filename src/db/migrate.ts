// Runs every migration of src/db/migrations (listed in its index.ts, sorted by name) at start.
// Each migration receives the dialect so it can pick column types that differ.
//
// Not Kysely's Migrator: on PostgreSQL it finds its tables by introspecting
// every schema in the database, and that catalog scan fails with "schema …
// does not exist" when another schema is dropped at the same moment (parallel
// test files, or other tenants of a shared database). This one looks only at
// the connection's own schema, keeps Kysely's bookkeeping table
// (kysely_migration), and runs all pending migrations in one transaction under
// a lock, so instances starting together apply each migration once.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './database.js';
import { MIGRATIONS } from './migrations/index.js';

const TABLE = 'kysely_migration';

/** Applies the migrations not yet recorded; returns the names it applied. */
export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    // SQLite: take the write lock up front so a second process waits instead of failing on upgrade.
    await sql.raw(dialect === 'sqlite' ? 'begin immediate' : 'begin').execute(conn);
    try {
      // PostgreSQL: one migrator per schema at a time; the lock ends with the transaction.
      if (dialect === 'postgres')
        await sql`select pg_advisory_xact_lock(hashtext('wsapi-migrate:' || current_schema()))`.execute(conn);
      await conn.schema
        .createTable(TABLE)
        .ifNotExists()
        .addColumn('name', 'varchar(255)', (col) => col.notNull().primaryKey())
        .addColumn('timestamp', 'varchar(255)', (col) => col.notNull())
        .execute();
      const done = new Set((await conn.selectFrom(TABLE).select('name').execute()).map((r) => r.name as string));
      const applied: string[] = [];
      for (const { name, migration } of MIGRATIONS) {
        if (done.has(name)) continue;
        try {
          await migration.up(conn, dialect);
        } catch (error) {
          throw new Error(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          });
        }
        await conn.insertInto(TABLE).values({ name, timestamp: new Date().toISOString() }).execute();
        applied.push(name);
      }
      await sql.raw('commit').execute(conn);
      return applied;
    } catch (error) {
      await sql.raw('rollback').execute(conn);
      throw error;
    }
  });
}
