// The write side of the event log. A module that changes data appends its
// events with the same transaction as the change (so a rolled-back write
// leaves no event and a committed one never loses its event), then calls
// announce() after commit so subscribers on every instance look for them.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { prepareQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';

export const EVENT_TYPES = ['key_created', 'key_deleted', 'object_created', 'object_updated', 'object_deleted', 'publish', 'unpublish'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  userId: string;
  type: EventType;
  payload: Record<string, unknown>;
}

type AnnounceListener = () => void;

/** Namespace (first key) of the advisory locks that order one user's events on PostgreSQL ('EVNT'). */
const EVENT_LOCK_NAMESPACE = 0x45564e54;

/** The expression that takes `userId`'s event lock (see record()); for statements that write events themselves. */
export const userEventLock = (userId: unknown) => sql<number>`pg_advisory_xact_lock(${sql.lit(EVENT_LOCK_NAMESPACE)}::int, hashtext(${userId}))`;

const insertOneEvent = prepareQuery((db, p) =>
  db.insertInto('events').values({ user_id: p(0), type: p(1), payload: p(2), created_at: p<number>(3) }),
);

/**
 * PostgreSQL: takes the user's event lock (see record()) and inserts the event
 * in one round trip. The insert reads its row from the lock's CTE, and a CTE
 * calling a volatile function is never inlined, so the lock is held before the
 * id is drawn from the sequence.
 */
const lockAndInsertOneEvent = prepareQuery((db, p) =>
  db
    .with('user_lock', (qb) => qb.selectNoFrom(userEventLock(p(0)).as('locked')))
    .insertInto('events')
    .columns(['user_id', 'type', 'payload', 'created_at'])
    .expression((eb) => eb.selectFrom('user_lock').select([eb.val(p(0)).as('user_id'), eb.val(p(1)).as('type'), eb.val(p(2)).as('payload'), eb.val(p<number>(3)).as('created_at')])),
);


export class EventRecorder {
  private readonly listeners = new Set<AnnounceListener>();
  constructor(
    private readonly clock: Clock,
    private readonly dialect: Dialect = 'sqlite',
  ) {}

  /**
   * Appends events through `db`: pass the transaction of the write they describe,
   * and call this as the transaction's last statement (see below).
   *
   * On PostgreSQL, ids come from a sequence and are assigned at insert time, so two
   * concurrent transactions can commit out of id order; a stream that had already
   * sent id 7 would then never send id 6. A transaction-scoped advisory lock per
   * user makes each user's events commit in id order (a user only ever sees their
   * own events, so that is the order that matters for Last-Event-ID). The lock is
   * held from here to commit, which is why this should be the last statement.
   * SQLite serialises writers, so ids are always committed in order there.
   */
  async record(db: Kysely<Database>, events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (this.dialect === 'postgres' && !db.isTransaction) {
      // The lock must live until commit: outside a transaction, make one.
      await db.transaction().execute((trx) => this.record(trx, events));
      return;
    }
    const now = this.clock.now();
    if (this.dialect === 'postgres' && events.length === 1) {
      const [e] = events;
      await lockAndInsertOneEvent.write(db, [e.userId, e.type, JSON.stringify(e.payload), now]);
      return;
    }
    if (this.dialect === 'postgres') {
      // Sorted, so two transactions locking the same users never deadlock on each other.
      for (const userId of [...new Set(events.map((e) => e.userId))].sort()) {
        await sql`select pg_advisory_xact_lock(${EVENT_LOCK_NAMESPACE}::int, hashtext(${userId}))`.execute(db);
      }
    }
    if (events.length === 1) {
      const [e] = events;
      await insertOneEvent.write(db, [e.userId, e.type, JSON.stringify(e.payload), now]);
      return;
    }
    await db
      .insertInto('events')
      .values(events.map((e) => ({ user_id: e.userId, type: e.type, payload: JSON.stringify(e.payload), created_at: now })))
      .execute();
  }

  /** Call after the transaction that recorded events has committed. */
  announce(): void {
    for (const listener of this.listeners) listener();
  }

  /** Registers a listener woken by announce() (the event broker; on PostgreSQL it also sends NOTIFY). */
  onAnnounce(listener: AnnounceListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
