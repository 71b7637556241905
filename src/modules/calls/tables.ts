// Call sessions (spec 4.14) and the progress reports of the audio server.

export interface CallSessionsTable {
  id: string;
  user_id: string;
  status: string;
  webhook_url: string | null;
  /** JSON text: what the call record keeps of the assembled call. */
  summary: string;
  provider_call_id: string | null;
  duration_seconds: number | null;
  finished_at: number | null;
  record_object_id: string | null;
  /** Unused since migration 140: Idempotency-Key replays carry X-Session-Id themselves. Left null (migration 100). */
  request_hash?: string | null;
  created_at: number;
  updated_at: number;
}

export interface CallProgressTable {
  /** The report's webhook-id. */
  id: string;
  session_id: string;
  status: string;
  payload: string;
  received_at: number;
}

export interface CallTables {
  call_sessions: CallSessionsTable;
  call_progress: CallProgressTable;
}
