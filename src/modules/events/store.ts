// Reads of the event log (the writes are in recorder.ts, inside writers' transactions).
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { EventType } from './recorder.js';

/** One row of the log; `payload` stays JSON text until someone needs its fields. */
export interface EventRow {
  id: number;
  user_id: string;
  type: string;
  payload: string;
  created_at: number;
}

/**
 * PostgreSQL: the snapshot a read saw (pg_current_snapshot). Transactions with
 * ids below `xmin` are finished; of those below `xmax`, the ones in `inProgress`
 * were still running. `xmax` is the latest finished transaction's id + 1, so
 * transactions that had ids at or above it and were running are in no list
 * of the snapshot: `running` adds the transaction ids pg_stat_activity showed
 * running just after the snapshot was taken (same statement).
 */
export interface Snapshot {
  xmin: number;
  xmax: number;
  inProgress: Set<number>;
  running: Set<number>;
}

/** What the tail loop read: rows (or ids) and, on PostgreSQL, the snapshot they were read in. */
export interface TailRead<T> {
  rows: T[];
  snapshot: Snapshot | null;
}

export class EventStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect = 'sqlite',
  ) {}

  /**
   * Every user's events after `afterId`, plus the listed older ids (ids the tail
   * loop saw skipped and is still waiting for), oldest first, and the snapshot
   * they were read in. The shared tail loop of the broker is the only caller:
   * one query per wake-up per instance.
   */
  async listAfter(afterId: number, alsoIds: number[], limit: number): Promise<TailRead<EventRow>> {
    const { rows, snapshot } = await this.tail(afterId, alsoIds, limit, [
      'id',
      'user_id',
      'type',
      'payload',
      'created_at',
    ]);
    return { rows: rows.map(normalise), snapshot };
  }

  /** Like listAfter, ids only: what the tail loop reads while nobody is subscribed. */
  async listIdsAfter(afterId: number, alsoIds: number[], limit: number): Promise<TailRead<number>> {
    const { rows, snapshot } = await this.tail(afterId, alsoIds, limit, ['id']);
    return { rows: rows.map((r) => Number(r.id)), snapshot };
  }

  private async tail<C extends 'id' | 'user_id' | 'type' | 'payload' | 'created_at'>(
    afterId: number,
    alsoIds: number[],
    limit: number,
    columns: C[],
  ) {
    const query = this.db
      .selectFrom('events')
      .select(columns)
      .where((eb) =>
        alsoIds.length ? eb.or([eb('id', '>', afterId), eb('id', 'in', alsoIds)]) : eb('id', '>', afterId),
      )
      .orderBy('id', 'asc')
      .limit(limit);
    if (this.dialect !== 'postgres') return { rows: await query.execute(), snapshot: null };
    // The rows and the snapshot in one statement, so they come from the same snapshot (one row of nulls when no rows).
    const result = await sql<Pick<EventRow, C | 'id'> & { snapshot: string; running: string }>`
      select s.snapshot, s.running, page.* from (select pg_current_snapshot()::text as snapshot,
        (select coalesce(string_agg(backend_xid::text, ','), '') from pg_stat_activity where backend_xid is not null) as running) s
      left join lateral (${query}) page on true order by page.id`.execute(this.db);
    const rows = result.rows.filter((row) => row.id !== null);
    return { rows, snapshot: parseSnapshot(result.rows[0]!.snapshot, result.rows[0]!.running) };
  }

  /**
   * One user's events after `afterId` up to `upToId`, optionally of some types,
   * oldest first (replay; the bound is what the broker has released). Uses the (user_id, id) index.
   */
  async listForUser(
    userId: string,
    afterId: number,
    types: readonly EventType[] | null,
    limit: number,
    upToId = Number.MAX_SAFE_INTEGER,
  ): Promise<EventRow[]> {
    let query = this.db
      .selectFrom('events')
      .select(['id', 'user_id', 'type', 'payload', 'created_at'])
      .where('user_id', '=', userId)
      .where('id', '>', afterId)
      .where('id', '<=', upToId);
    if (types) query = query.where('type', 'in', types);
    const rows = await query.orderBy('id', 'asc').limit(limit).execute();
    return rows.map(normalise);
  }

  /** The highest id in the log, 0 when it is empty. */
  async latestId(): Promise<number> {
    const row = await this.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /** The highest id among one user's events, 0 when they have none. */
  async latestIdForUser(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('events')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }
}

/** pg_snapshot text: `xmin:xmax:xip,xip,…` (64-bit transaction ids; far below 2^53 in practice). */
export function parseSnapshot(text: string, running = ''): Snapshot {
  const [xmin, xmax, list] = text.split(':');
  return {
    xmin: Number(xmin),
    xmax: Number(xmax),
    inProgress: new Set(list ? list.split(',').map(Number) : []),
    running: new Set(running ? running.split(',').map(Number) : []),
  };
}

// bigserial ids arrive as numbers (the pg int8 parser is set in db/database.ts); be explicit anyway.
const normalise = (row: EventRow): EventRow => ({ ...row, id: Number(row.id), created_at: Number(row.created_at) });
