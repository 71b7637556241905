// Reads of the event log (the writes are in recorder.ts, inside writers' transactions).
import type { Kysely } from 'kysely';
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

export class EventStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Every user's events after `afterId`, plus the listed older ids (ids the tail
   * loop saw skipped and is still waiting for), oldest first. The shared tail
   * loop of the broker is the only caller: one query per wake-up per instance.
   */
  async listAfter(afterId: number, alsoIds: number[], limit: number): Promise<EventRow[]> {
    const rows = await this.db
      .selectFrom('events')
      .select(['id', 'user_id', 'type', 'payload', 'created_at'])
      .where((eb) => (alsoIds.length ? eb.or([eb('id', '>', afterId), eb('id', 'in', alsoIds)]) : eb('id', '>', afterId)))
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(normalise);
  }

  /** Like listAfter, ids only: what the tail loop reads while nobody is subscribed. */
  async listIdsAfter(afterId: number, alsoIds: number[], limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('events')
      .select('id')
      .where((eb) => (alsoIds.length ? eb.or([eb('id', '>', afterId), eb('id', 'in', alsoIds)]) : eb('id', '>', afterId)))
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => Number(r.id));
  }

  /** One user's events after `afterId`, optionally of some types, oldest first (replay). Uses the (user_id, id) index. */
  async listForUser(userId: string, afterId: number, types: readonly EventType[] | null, limit: number): Promise<EventRow[]> {
    let query = this.db
      .selectFrom('events')
      .select(['id', 'user_id', 'type', 'payload', 'created_at'])
      .where('user_id', '=', userId)
      .where('id', '>', afterId);
    if (types) query = query.where('type', 'in', types);
    const rows = await query.orderBy('id', 'asc').limit(limit).execute();
    return rows.map(normalise);
  }

  /** The highest id in the log, 0 when it is empty. */
  async latestId(): Promise<number> {
    const row = await this.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
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

// bigserial ids arrive as numbers (the pg int8 parser is set in db/database.ts); be explicit anyway.
const normalise = (row: EventRow): EventRow => ({ ...row, id: Number(row.id), created_at: Number(row.created_at) });
