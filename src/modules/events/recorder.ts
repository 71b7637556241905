// The write side of the event log. A module that changes data appends its
// events with the same transaction as the change (so a rolled-back write
// leaves no event and a committed one never loses its event), then calls
// announce() after commit so subscribers on every instance look for them.
import type { Kysely } from 'kysely';
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

export class EventRecorder {
  private readonly listeners = new Set<AnnounceListener>();
  constructor(private readonly clock: Clock) {}

  /** Appends events through `db`: pass the transaction of the write they describe. */
  async record(db: Kysely<Database>, events: NewEvent[]): Promise<void> {
    if (events.length === 0) return;
    const now = this.clock.now();
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
