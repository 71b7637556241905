// The shape of the parsed configuration (src/config.ts builds it from the sections' declarations).
import type { RateLimits } from '../rate-limit-config.js';

export interface OidcProviderConfig {
  slug: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

export interface Config {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  /** Base64 32-byte key, or null to use (or create) DATA_DIR/master.key. */
  masterKey: string | null;
  jwtSecret: string | null;
  /** JWT_SECRET_ROTATE=1: this start may replace the JWT secret the database knows (every instance stopped first). */
  jwtSecretRotate: boolean;
  /** Serve /metrics on this port (a second listener on HOST) instead of the main one; null = not. */
  metricsPort: number | null;
  /** Bearer token for /metrics on the main port; null = open in development/test, absent in production. */
  metricsToken: string | null;
  publicUrl: string;
  /** Origins a returnTo / returnUrl may point at. */
  returnUrlOrigins: string[];
  allowSandbox: boolean;
  logLevel: string;
  trustProxy: boolean;
  bodyLimitBytes: number;
  /** Body limit of /api/auth/* and of every other route that needs no credentials (webhooks excepted: their parsers set their own). */
  unauthenticatedBodyLimitBytes: number;
  objectContentLimitBytes: number;
  /** About how large one answer of GET /api/objects/{id}/related may grow (JSON bytes); the rest comes on the next page. */
  relatedPageBytes: number;
  sessionTtlSeconds: number;
  /** How long an instance trusts a session or API-key lookup before reading it again; 0 = never. */
  authCacheMs: number;
  rememberTtlSeconds: number;
  twoFactorPendingTtlSeconds: number;
  passwordHash: { memoryCost: number; timeCost: number };
  twilio: { accountSid: string; authToken: string; from: string; apiBase: string } | null;
  smtp: { url: string; from: string } | null;
  emailFrom: string;
  oidcProviders: OidcProviderConfig[];
  rateLimits: RateLimits;
  events: EventStreamConfig;
  billing: BillingSettings;
  /** ElevenLabs voices for personas; null: local speech only. */
  elevenlabs: { apiKey: string; apiBase: string } | null;
  /** Calendly API for integrations; null: the sandbox stand-in (never in production). */
  calendly: { apiBase: string } | null;
  /** How long start-up keeps retrying an unreachable PostgreSQL before giving up. */
  databaseConnectTimeoutMs: number;
  /** Origins allowed to call the API from a browser: exact origins, or `scheme://host:*` for any port. */
  corsOrigins: string[];
  /** Settings that work but deserve a line in the start-up log. */
  warnings: string[];
  /** Pause before each status callback of the sandbox telephony provider (tests shorten it). */
  sandboxCallbackDelayMs: number;
  /** Longest the sandbox carrier's simulated caller waits for the agent to begin a reply before it goes on (tests lengthen it). */
  sandboxCallerPatienceMs: number;
  knowledge: KnowledgeConfig;
  /** Turn-taking and provider deadlines of live calls (docs/decisions/voice-agent.md), passed to each VoiceSession as settings. */
  voice: VoiceTimingConfig;
  /** OpenAI-compatible embeddings endpoint; null: knowledge search is full-text only. */
  embeddings: { url: string; model: string; apiKey: string | null } | null;
  connector: ConnectorConfig;
  webhooks: WebhookConfig;
  audio: AudioConfig;
  temporarySessions: TemporarySessionConfig;
  voiceAgent: VoiceAgentConfig;
  webCalls: WebCallConfig;
  mediaSockets: MediaSocketConfig;
}

/** Sockets of the media routes (/api/media/twilio, /api/media/web) whose token is not accepted yet (docs/decisions/voice-agent.md "Media sockets under attack"). */
export interface MediaSocketConfig {
  /** MEDIA_UNAUTHENTICATED_PER_ADDRESS (8): such sockets of one remote address; more are closed with 1013. */
  unauthenticatedPerAddress: number;
  /** MEDIA_UNAUTHENTICATED_MAX (200): such sockets in all, on one instance. */
  unauthenticatedTotal: number;
}

/** Calls from a browser (DESIGN.md "Calls from a browser"): free test calls, so bounded in length and number. */
export interface WebCallConfig {
  /** WEB_CALL_MAX_SECONDS (600): a web call ends (outcome max_duration) after this long, whatever its agent says. */
  maxSeconds: number;
  /** WEB_CALL_CONCURRENCY_PER_USER (2): web calls one user may have set up or under way at once; beyond, 429 too_many_calls. */
  concurrencyPerUser: number;
}

/** The live voice agent's providers (DESIGN.md "Voice agent"); see docs/decisions/voice-agent-providers.md. */
export interface VoiceAgentConfig {
  /**
   * Speech to text: STT_PROVIDER, else deepgram when DEEPGRAM_API_KEY is set, else openai when STT_URL is set;
   * null: pocketsphinx when it is installed, else none (decided at start-up, where the machine can be looked at).
   */
  sttProvider: 'deepgram' | 'openai' | 'pocketsphinx' | 'none' | null;
  /** Deepgram live transcription; apiBase is a WebSocket origin (wss://api.deepgram.com). */
  deepgram: { apiKey: string; apiBase: string } | null;
  /** An OpenAI-compatible /audio/transcriptions (STT_URL is an API base such as https://api.openai.com/v1). */
  openaiStt: { url: string; apiKey: string | null; model: string } | null;
  /** An OpenAI-compatible /chat/completions (LLM_URL); null: the sandbox dialogue engine answers. */
  llm: { url: string; apiKey: string | null; model: string } | null;
  /** Longest wait for the model's first token before it is retried once (VOICE_LLM_DEADLINE_MS). */
  llmDeadlineMs: number;
}

/** Temporary test calls (spec 3.4); see docs/decisions/temporary-sessions.md. */
export interface TemporarySessionConfig {
  /** The operator's numbers temporary calls are placed from (TEMPORARY_NUMBERS); outside production, sandbox numbers by default. */
  numbers: string[];
  /** JSON file of call types replacing the built-in ones (TEMPORARY_CALL_TYPES_FILE). */
  callTypesFile: string | null;
}

/** Payments and billing data (docs/decisions/billing.md). */
export interface BillingSettings {
  /** Real Stripe when set; otherwise the sandbox payment provider. */
  stripe: { secretKey: string; webhookSecret: string; apiBase: string } | null;
  plansFile: string | null;
  voicePricingFile: string | null;
  /** Default top-up of POST /api/credits/add, in US dollars (5 to 1,000). */
  topupDefaultUsd: number;
  /** How long GET /api/credits may answer from this instance's memory (spec 8: 60 s). */
  balanceCacheMs: number;
  /** Calls one user may have under way at once (CALL_CONCURRENCY_PER_USER); a plan's `callConcurrency` may raise it. */
  callConcurrencyPerUser: number;
  /** The longest call (CALL_MAX_SECONDS): its hold covers this many seconds when the balance allows. */
  callMaxSeconds: number;
  /** Price of one SMS segment in ten-thousandths of a dollar (SMS_PRICE_USD, e.g. 0.0079 → 79). */
  smsSegmentPrice: number;
}

/** Live-call timing (DESIGN "Voice agent"); names match VoiceSettings so the wiring can spread it. */
export interface VoiceTimingConfig {
  endpointMinMs: number;
  endpointMaxMs: number;
  bargeInMs: number;
  llmDeadlineMs: number;
  askModelAhead: boolean;
  repromptMs: number;
  maxReprompts: number;
}

/** Knowledge bases (spec 4.15, 8); see docs/decisions/knowledge.md. */
export interface KnowledgeConfig {
  /** Files per upload request. */
  maxFiles: number;
  /** Bytes per uploaded file. */
  maxFileBytes: number;
  /** Let the link crawler reach loopback, private and link-local addresses (never in production unless you mean it). */
  crawlAllowPrivate: boolean;
  /** Origins the link crawler may fetch even though their address is private: outside production the server's own PUBLIC_URL, so its own pages can be crawled. */
  crawlAllowOrigins: string[];
  /** Bytes per downloaded page or file. */
  crawlMaxBytes: number;
  /** Deadline per download (spec 8: 15 s). */
  crawlTimeoutMs: number;
  /** In-memory search indexes kept by this instance, in bytes (KNOWLEDGE_SEARCH_CACHE_MB); 0: the database ranks every search. */
  searchCacheBytes: number;
  /** Reading files off the event loop; see docs/decisions/knowledge.md "Limits". */
  extraction: ExtractionConfig;
  /** What one user may keep in all their knowledge bases together (uploads and crawled links). */
  quota: KnowledgeQuota;
}

/** Worker threads that read files (PDF, DOCX, HTML, text), slice and chunk them, and the limits per file. */
export interface ExtractionConfig {
  /** Worker threads at most (KNOWLEDGE_EXTRACT_WORKERS; default: cores − 1, 1 to 4); started on first use, stopped when idle. */
  workers: number;
  /** Time one file may take to read, slice and chunk (KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** JavaScript heap of one worker (KNOWLEDGE_EXTRACT_MEMORY_MB). */
  memoryMb: number;
  /** Bytes a file may inflate to: a DOCX's zip entries together, a PDF's compressed streams together (KNOWLEDGE_MAX_INFLATED_MB). */
  maxInflatedBytes: number;
  /** UTF-8 bytes of text one file may yield (KNOWLEDGE_MAX_TEXT_MB). */
  maxTextBytes: number;
  /** An idle worker is stopped after this long. */
  idleMs: number;
}

/** Per-user knowledge quota, over all of the user's bases. */
export interface KnowledgeQuota {
  /** KNOWLEDGE_QUOTA_DOCUMENTS */
  documents: number;
  /** KNOWLEDGE_QUOTA_CHUNKS */
  chunks: number;
  /** Sum of documents' sizes (KNOWLEDGE_QUOTA_MB). */
  bytes: number;
}

/** Connector ingestion (POST /api/connect); see docs/decisions/connect.md. */
export interface ConnectorConfig {
  /** CONNECTOR_URL without a trailing slash; null: the sandbox connector. */
  url: string | null;
  token: string | null;
  /** Longest silence of a connector (before its headers, or between pieces of its stream). */
  idleTimeoutMs: number;
  /** Price of one paid lead (`/get-leads`), from LEAD_PRICE_USD. */
  leadPriceCents: number;
  /** A running lead job stamps its heartbeat this often (CONNECTOR_HEARTBEAT_SECONDS, default 15). */
  heartbeatMs: number;
  /** Recovery settles a lead job whose heartbeat is older than this: 4 heartbeats, at least 60 s. */
  staleAfterMs: number;
}

/** Outbound webhook deliveries (call progress); see docs/decisions/calls.md. */
export interface WebhookConfig {
  /** Loopback and private targets allowed: always outside production, and with WEBHOOK_ALLOW_PRIVATE=1. */
  allowPrivate: boolean;
  /** One delivery attempt's time limit; past it the attempt counts as failed and is retried. */
  timeoutMs: number;
  /** How often the delivery worker looks for due deliveries besides being woken by new ones. */
  pollIntervalMs: number;
}

/** The audio server that carries out calls: real when AUDIO_SERVER_URL is set, else the in-process sandbox. */
export interface AudioConfig {
  /** null: the in-process sandbox. */
  url: string | null;
  /** Standard Webhooks secret (`whsec_<base64>`) shared with the audio server; null in sandbox mode (a random one per process). */
  secret: string | null;
  /** Sandbox: time between the call's status steps (the timer stand-in, SANDBOX_CALLS=timer). */
  sandboxStepMs: number;
  /**
   * SANDBOX_CALLS: without Twilio and without an audio server, who carries calls: `voice` (default) the
   * built-in voice agent through the sandbox carrier (a simulated caller on a real media stream over
   * loopback, docs/decisions/voice-agent.md "Sandbox carrier"); `timer` the old stand-in that only plays
   * status steps (quick, no audio; most tests use it).
   */
  sandboxCalls: 'voice' | 'timer';
  /** CALL_RECORDING (default on): the voice agent stores a two-channel WAV with each call record. */
  recording: boolean;
}

/** Live event streams (GET /api/events/{type}); see docs/decisions/events.md. */
export interface EventStreamConfig {
  /** Open streams one user may hold on one instance; past it, 429. */
  maxStreamsPerUser: number;
  /** Interval of the `: keep-alive` comment. */
  keepAliveMs: number;
  /** Unsent bytes a stream may queue; past it the stream stops queueing and catches up from the log once the client has read them. */
  maxBufferedBytes: number;
  /** Unsent bytes all streams of the instance may queue together; past it streams with a backlog stop queueing and catch up. */
  maxBufferedTotalBytes: number;
  /** Recent events kept in memory (bytes) so streams that fell behind catch up without reading the log. */
  recentBytes: number;
  /** A stream that wrote within this many ms gathers what arrives meanwhile into one write (0: write every batch at once). */
  coalesceMs: number;
  /** A stream whose backlog does not drain within this is ended as too slow (the client resumes with Last-Event-ID). */
  slowClientTimeoutMs: number;
  /**
   * PostgreSQL: longest wait for a missing event id while transactions that may
   * own it still run (later events wait with it; see docs/decisions/events.md).
   */
  gapWaitMs: number;
  /** Safety poll of the event log, for wake-ups that were lost (e.g. a dropped LISTEN connection). */
  pollIntervalMs: number;
  /** How often an open stream re-checks its credential (revoked keys and logged-out sessions stop streaming). */
  reauthIntervalMs: number;
}

/** The auth area's slice of the configuration: session lifetimes, the addresses its links and redirects may use, and its own rate-limit rules. */
export interface AuthSettings {
  publicUrl: string;
  returnUrlOrigins: string[];
  sessionTtlSeconds: number;
  rememberTtlSeconds: number;
  twoFactorPendingTtlSeconds: number;
  rateLimits: Pick<
    RateLimits,
    | 'registerPerIp'
    | 'loginPerIp'
    | 'loginPerEmail'
    | 'signupNoticePerEmail'
    | 'verifyRequestPerPhone'
    | 'verifyRequestPerUser'
    | 'verifyRequestPerIp'
    | 'verifySubmitPerUser'
    | 'twoFactorPerUser'
    | 'resetRequestPerIp'
    | 'resetRequestPerEmail'
    | 'resetSubmitPerIp'
    | 'externalInitPerIp'
  >;
}
