// One claim of due rows for the queues that several instances work at once
// (the job queue, outbound webhook deliveries): pick up to `limit` due rows and
// update them in one statement, so two instances never claim the same row.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';

export interface DueRows {
  table: 'jobs' | 'webhook_deliveries';
  /** Which rows are due, unqualified columns of `table`: checked on the pick and again on the locked row. */
  due: RawBuilder<unknown>;
  /** The column the oldest due rows are picked by. */
  orderBy: string;
  limit: number;
  /** The claim itself (an UPDATE's SET list, unqualified columns of `table`). */
  set: RawBuilder<unknown>;
}

/**
 * Claims up to `limit` due rows and returns them as updated. PostgreSQL skips
 * rows another instance is claiming (SKIP LOCKED) and re-checks `due` on the
 * locked row; SQLite runs one write at a time, so the same update is atomic.
 * Never more than `limit`: PostgreSQL may run an `id in (select ... limit n for
 * update skip locked)` subquery more than once, each time skipping the rows it
 * locked before, and so update more than n; the pick is a materialized CTE, run
 * once.
 */
export async function claimDueRows<Row>(db: Kysely<Database>, dialect: Dialect, claim: DueRows): Promise<Row[]> {
  const table = sql.table(claim.table);
  const order = sql.ref(claim.orderBy);
  const { rows } =
    dialect === 'postgres'
      ? await sql<Row>`
      with picked as materialized (
        select id from ${table} where ${claim.due} order by ${order} limit ${claim.limit} for update skip locked)
      update ${table} set ${claim.set}
        from picked
       where ${table}.id = picked.id and ${claim.due}
      returning ${table}.*`.execute(db)
      : await sql<Row>`
      update ${table} set ${claim.set}
       where id in (select id from ${table} where ${claim.due} order by ${order} limit ${claim.limit})
         and ${claim.due}
      returning *`.execute(db);
  return rows;
}
