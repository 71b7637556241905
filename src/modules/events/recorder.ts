// The write side of the event log. A module that changes data appends its
// events with the same transaction as the change (so a rolled-back write
// leaves no event and a committed one never loses its event), then calls
// announce() after commit so subscribers on every instance look for them.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { prepareQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';

export const EVENT_TYPES = [
  'key_created',
  'key_deleted',
  'object_created',
  'object_updated',
  'object_deleted',
  'publish',
  'unpublish',
  'sms_status',
  'call_status',
  'call_transcript',
  'call_analysis',
  'call_node',
  'agent_test_run',
  'campaign_status',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  userId: string;
  type: EventType;
  payload: Record<string, unknown>;
  /** The payload as JSON text when the writer already has it (exactly JSON.stringify(payload)); written instead of stringifying again. */
  payloadJson?: string;
}

/** The text stored in events.payload. */
export const payloadText = (e: NewEvent): string => e.payloadJson ?? JSON.stringify(e.payload);

type AnnounceListener = () => void;

const insertOneEvent = prepareQuery((db, p) =>
  db.insertInto('events').values({ user_id: p(0), type: p(1), payload: p(2), created_at: p<number>(3) }),
);

/**
 * PostgreSQL: an event insert whose id is drawn only after the transaction has
 * its transaction id. The broker relies on that (see broker.ts, "Order"): a
 * missing id's owner must be among the in-progress transactions of any later
 * snapshot in which a higher id is visible. A materialized CTE runs before the
 * rows that read from it are produced, so pg_current_xact_id() (which assigns
 * the id if the transaction has none yet) runs before the sequence is called.
 */
const insertOneEventAfterXact = prepareQuery((db, p) =>
  db
    .with(
      (cte) => cte('xact').materialized(),
      (qb) => qb.selectNoFrom(transactionId().as('xid')),
    )
    .insertInto('events')
    .columns(['user_id', 'type', 'payload', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('xact')
        .select([
          eb.val(p(0)).as('user_id'),
          eb.val(p(1)).as('type'),
          eb.val(p(2)).as('payload'),
          eb.val(p<number>(3)).as('created_at'),
        ]),
    ),
);

/** PostgreSQL: the current transaction's id, assigning one if it has none; for statements that write events themselves (see above). */
export const transactionId = () => sql<string>`pg_current_xact_id()`;

export class EventRecorder {
  private readonly listeners = new Set<AnnounceListener>();
  constructor(
    private readonly clock: Clock,
    private readonly dialect: Dialect = 'sqlite',
  ) {}

  /**
   * Appends events through `db`: pass the transaction of the write they
   * describe. Best as the transaction's last statement: on PostgreSQL, events
   * with higher ids wait (in the broker, not in the database) until this
   * transaction ends, so a long transaction after its event delays delivery.
   */
  async record(db: Kysely<Database>, events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = this.clock.now();
    if (this.dialect === 'postgres' && events.length === 1) {
      const [e] = events;
      await insertOneEventAfterXact.write(db, [e.userId, e.type, payloadText(e), now]);
      return;
    }
    if (this.dialect === 'postgres' && !db.isTransaction) {
      // The transaction id must be taken before the ids are drawn, by the same transaction.
      await db.transaction().execute((trx) => this.record(trx, events));
      return;
    }
    if (this.dialect === 'postgres') await sql`select ${transactionId()}`.execute(db);
    if (events.length === 1) {
      const [e] = events;
      await insertOneEvent.write(db, [e.userId, e.type, payloadText(e), now]);
      return;
    }
    await db
      .insertInto('events')
      .values(events.map((e) => ({ user_id: e.userId, type: e.type, payload: payloadText(e), created_at: now })))
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
