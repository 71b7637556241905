// The audio server carries out a call: it dials, speaks with the assembled
// prompt, voice and tools, and reports progress back to the service as
// Standard Webhooks signed with the shared audio secret.
import type { AnalysisSettings } from '../../modules/analysis/settings.js';
import type { SandboxScript } from '../telephony/interface.js';

/** A tool the agent may call during the conversation (knowledge search, integration functions). */
export interface CallTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** Everything the audio server needs to carry out one call. */
export interface AssembledCall {
  /** E.164 number called. */
  to: string;
  /** E.164 number called from (the caller's number). */
  from: string | null;
  /**
   * Who speaks for the caller, for the record and the greeting: its object
   * in the `agents` store when it is one, and its post-call analysis
   * settings (DESIGN.md "Post-call analysis and analytics").
   */
  agent: { name: string; id?: string; analysis?: AnalysisSettings };
  /** Who is called, for the record. */
  contact: { name: string };
  systemPrompt: string;
  /** The agent's opening line. */
  firstMessage: string;
  voice: { provider: string; voiceId: string };
  tools: CallTool[];
  /** The audio server ends the call by then (temporary test calls set it). */
  maxDurationSeconds?: number;
  /** What the built-in voice agent needs beyond the prompt: where its tools act, whom it may transfer to. */
  context?: CallContext;
  /**
   * The conversational pathway the voice session walks (DESIGN.md
   * "Conversational pathways"), resolved and valid: `id` is the object of
   * the owner's `conversational-pathways` store, null when given inline; an
   * old `{ name?, steps }` list comes converted to its linear document.
   * Inline tools of its conversation nodes are declared as `customTools`
   * are (header values sealed).
   */
  pathway?: CallPathway;
  /** The call's variables (a call payload's `variables`): what `{{name}}` templates are filled from, before what the call collects. */
  variables?: Record<string, string | number | boolean>;
  /**
   * The custom HTTP tools of the agent or payload (DESIGN.md "Custom tools
   * and call variables"), declared: `{ type: "http", name, description,
   * parameters, url, method, headers, timeoutMs, speak?, assign, keywords }`,
   * each header value sealed with the master key (CustomToolService.invoke
   * opens them); never offered in `tools`.
   */
  customTools?: Array<Record<string, unknown>>;
  /** The contact's fields (`{{contact.fields.X}}`). */
  contactFields?: Record<string, string>;
  /** What assembly noticed but let pass: `{{names}}` filled with nothing, the pathway validator's warnings. For the call record. */
  warnings?: string[];
  /** What the sandbox carrier's simulated caller does (POST /api/session/call's `script`); Twilio and external audio servers ignore it. */
  sandboxScript?: SandboxScript;
}

/** A pathway as an assembled call carries it: plain JSON (the document's schema is src/modules/pathways/schemas.ts). */
export interface CallPathway {
  id: string | null;
  name: string;
  document: Record<string, unknown>;
}

/** The references behind an assembled call's tools (DESIGN.md "Voice agent"). */
export interface CallContext {
  knowledgeBaseId?: string;
  integrationIds?: string[];
  humanAgents?: Array<{ id: string; name: string; phone: string }>;
  /** Spoken after an answering machine's beep; none: hang up. */
  voicemailMessage?: string;
}

/** Why a call ended as it did (DESIGN.md "Voice agent: the exact contract"). */
export const CALL_OUTCOMES = [
  'completed',
  'voicemail',
  'transferred',
  'no_answer',
  'busy',
  'refused',
  'provider_error',
  'instance_stopped',
  'max_duration',
  /** The call's pathway could not go on (DESIGN.md "Conversational pathways": the move limit, a step with no way on). */
  'pathway_error',
] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export const CALL_STATUSES = [
  'queued',
  'ringing',
  'in_progress',
  'completed',
  'failed',
  'busy',
  'no_answer',
  'canceled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const FINAL_STATUSES: readonly CallStatus[] = ['completed', 'failed', 'busy', 'no_answer', 'canceled'];

export interface TranscriptLine {
  role: 'agent' | 'contact';
  text: string;
}

/** The body of one progress report (POST /api/webhooks/audio/{sessionId}). */
export interface AudioProgress {
  status: CallStatus;
  /** ISO-8601 time of the change at the audio server. */
  at: string;
  duration_seconds?: number;
  transcript?: TranscriptLine[];
  /** Final states: why it ended, and a short machine reason (`insufficient_funds`, `not_attached`, …). */
  outcome?: CallOutcome;
  reason?: string;
}

/**
 * What the built-in voice agent knows of an ended call beyond the report:
 * it goes into the encrypted call record (never into events or webhooks).
 */
export interface CallRecordExtras {
  /** Fields merged into the record: transcript lines with times and latency, tool calls, error. */
  fields: Record<string, unknown>;
  /**
   * Two-channel WAV (caller left, agent right): the file's bytes in order, in
   * parts that each fit the largest object, stored as the record's children
   * in that order (GET /api/calls/{id}/recording joins them).
   */
  recordingParts?: Buffer[];
}

/** Applies a report from an in-process carrier, which needs no signature; `reportId` deduplicates like a webhook-id. */
export type ProgressReporter = (
  sessionId: string,
  reportId: string,
  progress: AudioProgress,
  extras?: CallRecordExtras,
) => Promise<void>;

/** Where progress reports go: the raw body and headers, verified like the webhook route's. */
export type ProgressSink = (sessionId: string, rawBody: Buffer, headers: Record<string, string>) => Promise<void>;

export interface AudioProvider {
  readonly name: string;
  readonly sandbox: boolean;
  /**
   * Hands the call to the audio server, which reports to `progressUrl`.
   * Resolves once the server has accepted it; AppError `provider_error` when
   * it refuses or cannot be reached.
   */
  startCall(sessionId: string, call: AssembledCall, progressUrl: string): Promise<{ providerCallId: string }>;
  /** In-process audio servers only: where their reports go instead of over HTTP. */
  connect?(sink: ProgressSink): void;
  /** Stops calls under way in this process (the app is closing). */
  close?(): void;
  /** In-process audio servers only: where failures to deliver a report are logged. */
  reportErrorsTo?(log: { error(obj: unknown, msg: string): void }): void;
}
