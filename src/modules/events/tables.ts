import type { Generated } from 'kysely';

/** The durable, append-only event log (spec 6). Ids increase monotonically. */
export interface EventsTable {
  id: Generated<number>;
  user_id: string;
  type: string;
  /** JSON text of the event's payload fields. */
  payload: string;
  created_at: number;
}

export interface EventTables {
  events: EventsTable;
}
