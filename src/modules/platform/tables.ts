import type { Generated } from 'kysely';

export interface AuditLogTable {
  id: Generated<number>;
  user_id: string | null;
  action: string;
  success: number;
  ip: string | null;
  user_agent: string | null;
  /** JSON text with action-specific details (never secrets). */
  detail: string | null;
  created_at: number;
}

export interface RateLimitsTable {
  key: string;
  window_start: number;
  count: number;
}

export interface SandboxOutboxTable {
  id: string;
  channel: 'sms' | 'email';
  recipient: string;
  subject: string | null;
  body: string;
  /** JSON text: the machine-readable part (code, token, url). */
  data: string;
  created_at: number;
}

export interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  fingerprint: string;
  state: 'running' | 'done';
  status_code: number | null;
  content_type: string | null;
  body: string | null;
  /** JSON object of the documented response headers sent with the answer (migration 140). */
  headers?: string | null;
  created_at: number;
  expires_at: number;
}

/** A spent single-use token (see single-use.ts). */
export interface SingleUseTokensTable {
  purpose: string;
  id: string;
  expires_at: number;
  used_at: number;
}

/** Server-wide values (e.g. the master key check); see key-check.ts. */
export interface ServerSettingsTable {
  name: string;
  value: string;
  updated_at: number;
}

/** A durable job (jobs.ts): `run_at` is when it is due, or, while running, when its lease ends. */
export interface JobsTable {
  id: string;
  kind: string;
  user_id: string | null;
  /** JSON text the job's handler reads. */
  payload: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  run_at: number;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface PlatformTables {
  audit_log: AuditLogTable;
  rate_limits: RateLimitsTable;
  sandbox_outbox: SandboxOutboxTable;
  idempotency_keys: IdempotencyKeysTable;
  single_use_tokens: SingleUseTokensTable;
  server_settings: ServerSettingsTable;
  jobs: JobsTable;
}
