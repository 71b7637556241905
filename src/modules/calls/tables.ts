// Call sessions (spec 4.14) and the progress reports of the audio server.

export interface CallSessionsTable {
  id: string;
  user_id: string;
  /** outbound (the default) | inbound | web: which of the plan's allowances the call uses (web calls are free). */
  direction?: string;
  status: string;
  webhook_url: string | null;
  /** JSON text: what the call record keeps of the assembled call. */
  summary: string;
  provider_call_id: string | null;
  duration_seconds: number | null;
  finished_at: number | null;
  record_object_id: string | null;
  /** The built-in voice agent's assembled call, sealed with the master key (migration 240); null for external audio servers. */
  assembled?: string | null;
  answered_at?: number | null;
  /** Twilio's AnsweredBy from asynchronous machine detection (human, machine_end_beep, …). */
  answered_by?: string | null;
  /** The instance carrying the call's media stream, and when it last confirmed it (a stale one has stopped). */
  media_instance?: string | null;
  media_heartbeat_at?: number | null;
  /** When the media stream must have connected by (its token's expiry; migration 400): a session still waiting after it is ended. */
  media_deadline_at?: number | null;
  /** The instance whose in-process sandbox carrier holds the call until its stream connects (migration 400). */
  carrier_instance?: string | null;
  /** The carrier's CallDuration of a `completed` that came while an instance still carried the stream (migration 400). */
  carrier_duration_seconds?: number | null;
  /** Final states: why the call ended (CallOutcome) and a short machine reason. */
  outcome?: string | null;
  reason?: string | null;
  /** The campaign the call is an attempt of (migration 520). */
  campaign_id?: string | null;
  /** Post-call analysis (migration 510): the agent record's id, whether the call succeeded (1/0, null: undecided), its cost with its transfer leg, the median and 95th percentile of its answer latency. */
  agent_id?: string | null;
  success?: number | null;
  cost_cents?: number | null;
  latency_p50_ms?: number | null;
  latency_p95_ms?: number | null;
  /** What the call counts as in analytics, in bits (analysis/tally.ts). */
  tally?: number | null;
  /** null until analysed; completed | failed | skipped (no caller line). */
  analysis_status?: string | null;
  /** The job that holds the call's analysis (migration 540): one job writes it, the others see it taken. */
  analysis_job_id?: string | null;
  /** The call's `performance-metrics` record, and when its tasks were written (once). */
  metrics_object_id?: string | null;
  tasks_written_at?: number | null;
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

/** What a call may cost and what it cost (calls/charges.ts); the ledger hold is `hold:call:{ref}`. */
export interface CallChargesTable {
  ref: string;
  user_id: string;
  direction: string;
  country: string;
  /** Per-minute rate in ten-thousandths of a dollar. */
  rate: number;
  max_seconds: number;
  /** Allowance seconds set aside (open) or used (settled). */
  allowance_seconds: number;
  allowance_call: number;
  hold_cents: number;
  /** open | settled | refused */
  state: string;
  seconds: number | null;
  charged_cents: number | null;
  created_at: number;
  settled_at: number | null;
  /** Transfer legs: when the carrier took the redirect to their <Dial> (migration 400); null while not dialled. */
  dialled_at?: number | null;
}

export interface CallTables {
  call_sessions: CallSessionsTable;
  call_progress: CallProgressTable;
  call_charges: CallChargesTable;
}
