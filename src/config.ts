// Every environment variable the server reads is parsed here, once, at start.
// A bad value stops start-up with a message naming every offending variable.
import { availableParallelism } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { type RateLimits, defaultRateLimits, developmentRateLimits, parseRateLimits } from './rate-limit-config.js';

// Rate limits are defined in src/rate-limit-config.ts; re-exported for the callers that read every setting from here.
export { type RateLimitRule, type RateLimits, defaultRateLimits } from './rate-limit-config.js';

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

const STT_PROVIDERS = ['deepgram', 'openai', 'pocketsphinx', 'none'] as const;

/** Temporary test calls (spec 3.4); see docs/decisions/temporary-sessions.md. */
export interface TemporarySessionConfig {
  /** The operator's numbers temporary calls are placed from (TEMPORARY_NUMBERS); outside production, sandbox numbers by default. */
  numbers: string[];
  /** JSON file of call types replacing the built-in ones (TEMPORARY_CALL_TYPES_FILE). */
  callTypesFile: string | null;
}

/** Outside production, temporary calls go out from these sandbox numbers unless TEMPORARY_NUMBERS names others. */
export const SANDBOX_TEMPORARY_NUMBERS = ['+15005550101', '+15005550102', '+15005550103'];

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

/** Picks the auth area's settings out of the whole configuration. */
export function authSettings(config: Config): AuthSettings {
  const { publicUrl, returnUrlOrigins, sessionTtlSeconds, rememberTtlSeconds, twoFactorPendingTtlSeconds, rateLimits } =
    config;
  return { publicUrl, returnUrlOrigins, sessionTtlSeconds, rememberTtlSeconds, twoFactorPendingTtlSeconds, rateLimits };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

type Env = Record<string, string | undefined>;

/** Parses the environment; throws ConfigError listing every bad variable. */
export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => (env[name] ?? '').trim() || fallback;
  const opt = (name: string) => (env[name] ?? '').trim() || null;
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = opt(name);
    if (raw === null) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string) => {
    const raw = opt(name);
    if (raw === null) return false;
    if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
    problems.push(`${name} must be 1/true/yes or 0/false/no (got "${raw}")`);
    return false;
  };
  const url = (name: string, value: string, protocols: string[]) => {
    try {
      const u = new URL(value);
      if (!protocols.includes(u.protocol)) throw new Error();
      return u;
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL (got "${value}")`);
      return null;
    }
  };

  const nodeEnv = str('NODE_ENV', 'development');
  if (!['development', 'production', 'test'].includes(nodeEnv)) {
    problems.push(`NODE_ENV must be development, production or test (got "${nodeEnv}")`);
  }
  const port = int('PORT', 3000, 0, 65535);
  const host = str('HOST', '127.0.0.1');
  const warnings: string[] = [];
  const dataDirRaw = str('DATA_DIR', './data');
  const dataDir = isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw);

  const databaseUrl = opt('DATABASE_URL');
  if (databaseUrl) url('DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);

  const masterKey = opt('MASTER_KEY');
  if (masterKey && Buffer.from(masterKey, 'base64').length !== 32) {
    problems.push('MASTER_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  }
  const jwtSecret = opt('JWT_SECRET');
  if (jwtSecret && jwtSecret.length < 32) problems.push('JWT_SECRET must be at least 32 characters');
  if (databaseUrl && !masterKey)
    problems.push('MASTER_KEY is required with DATABASE_URL (every instance must share it)');
  if (databaseUrl && !jwtSecret)
    problems.push('JWT_SECRET is required with DATABASE_URL (every instance must share it)');
  const metricsPort = opt('METRICS_PORT') === null ? null : int('METRICS_PORT', 0, 1, 65535);
  if (metricsPort !== null && metricsPort === port) problems.push('METRICS_PORT must differ from PORT');
  const metricsToken = opt('METRICS_TOKEN');
  if (metricsToken && metricsToken.length < 16) problems.push('METRICS_TOKEN must be at least 16 characters');

  // Listening on every interface says nothing about the address clients use: links say localhost until PUBLIC_URL says otherwise.
  const wildcardHost = ['0.0.0.0', '::', '[::]'].includes(host);
  if (wildcardHost && !opt('PUBLIC_URL')) {
    warnings.push(
      `HOST=${host} without PUBLIC_URL: links and redirect URIs use http://localhost:${port}; set PUBLIC_URL to the address clients reach`,
    );
  }
  const defaultHost = wildcardHost ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const publicUrl = str('PUBLIC_URL', `http://${defaultHost}:${port}`).replace(/\/$/, '');
  url('PUBLIC_URL', publicUrl, ['http:', 'https:']);
  const returnUrlOrigins = (opt('RETURN_URL_ORIGINS') ?? publicUrl)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((o) => url('RETURN_URL_ORIGINS', o, ['http:', 'https:'])?.origin ?? o);

  const twilioSid = opt('TWILIO_ACCOUNT_SID');
  const twilioToken = opt('TWILIO_AUTH_TOKEN');
  const twilioFrom = opt('TWILIO_FROM');
  let twilio: Config['twilio'] = null;
  if (twilioSid || twilioToken || twilioFrom) {
    if (!twilioSid || !twilioToken || !twilioFrom) {
      problems.push('TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM must be set together');
    } else {
      const apiBase = str('TWILIO_API_BASE', 'https://api.twilio.com');
      url('TWILIO_API_BASE', apiBase, ['http:', 'https:']);
      twilio = { accountSid: twilioSid, authToken: twilioToken, from: twilioFrom, apiBase: apiBase.replace(/\/$/, '') };
    }
  }

  const emailFrom = str('EMAIL_FROM', 'Workspace <no-reply@localhost>');
  const smtpUrl = opt('SMTP_URL');
  let smtp: Config['smtp'] = null;
  if (smtpUrl && url('SMTP_URL', smtpUrl, ['smtp:', 'smtps:'])) smtp = { url: smtpUrl, from: emailFrom };

  const oidcProviders: OidcProviderConfig[] = [];
  for (const slug of (opt('OIDC_PROVIDERS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(slug)) {
      problems.push(`OIDC_PROVIDERS: "${slug}" must be lower-case letters, digits and dashes`);
      continue;
    }
    if (slug === 'providers' || slug === 'register') {
      problems.push(`OIDC_PROVIDERS: "${slug}" is reserved (it names a route under /api/auth/external)`);
      continue;
    }
    const key = slug.toUpperCase().replace(/-/g, '_');
    const issuer = opt(`OIDC_${key}_ISSUER`);
    const clientId = opt(`OIDC_${key}_CLIENT_ID`);
    const clientSecret = opt(`OIDC_${key}_CLIENT_SECRET`);
    if (!issuer || !clientId || !clientSecret) {
      problems.push(
        `OIDC_${key}_ISSUER, OIDC_${key}_CLIENT_ID and OIDC_${key}_CLIENT_SECRET are required for provider "${slug}"`,
      );
      continue;
    }
    url(`OIDC_${key}_ISSUER`, issuer, ['http:', 'https:']);
    oidcProviders.push({
      slug,
      name: str(`OIDC_${key}_NAME`, slug),
      issuer,
      clientId,
      clientSecret,
      scopes: str(`OIDC_${key}_SCOPES`, 'openid email profile'),
    });
  }

  const stripeKey = opt('STRIPE_SECRET_KEY');
  const stripeWebhookSecret = opt('STRIPE_WEBHOOK_SECRET');
  let stripe: BillingSettings['stripe'] = null;
  if (stripeKey) {
    if (!/^(sk|rk)_(test|live)_/.test(stripeKey))
      problems.push('STRIPE_SECRET_KEY must be a Stripe secret or restricted key (sk_… or rk_…)');
    if (!stripeWebhookSecret) problems.push('STRIPE_WEBHOOK_SECRET (whsec_…) is required with STRIPE_SECRET_KEY');
    const apiBase = str('STRIPE_API_BASE', 'https://api.stripe.com').replace(/\/$/, '');
    url('STRIPE_API_BASE', apiBase, ['http:', 'https:']);
    stripe = { secretKey: stripeKey, webhookSecret: stripeWebhookSecret ?? '', apiBase };
  }
  const dataFile = (name: string) => {
    const raw = opt(name);
    return raw === null ? null : isAbsolute(raw) ? raw : resolve(cwd, raw);
  };
  const temporaryRaw = opt('TEMPORARY_NUMBERS');
  const temporaryNumbers =
    temporaryRaw === null
      ? nodeEnv === 'production'
        ? []
        : SANDBOX_TEMPORARY_NUMBERS
      : [
          ...new Set(
            temporaryRaw
              .split(',')
              .map((n) => n.trim())
              .filter(Boolean),
          ),
        ];
  for (const n of temporaryNumbers)
    if (!/^\+[1-9]\d{6,14}$/.test(n))
      problems.push(`TEMPORARY_NUMBERS must be comma-separated E.164 numbers such as +14155550123 (got "${n}")`);
  const topupRaw = opt('CREDITS_TOPUP_USD');
  const topupDefaultUsd = topupRaw === null ? 20 : Number(topupRaw);
  if (
    !(topupDefaultUsd >= 5 && topupDefaultUsd <= 1000) ||
    Math.round(topupDefaultUsd * 100) !== topupDefaultUsd * 100
  ) {
    problems.push(`CREDITS_TOPUP_USD must be 5 to 1000 US dollars in whole cents (got "${topupRaw}")`);
  }
  const elevenlabsKey = opt('ELEVENLABS_API_KEY');
  const elevenlabsBase = str('ELEVENLABS_API_BASE', 'https://api.elevenlabs.io').replace(/\/$/, '');
  url('ELEVENLABS_API_BASE', elevenlabsBase, ['http:', 'https:']);
  // Calendly needs no credentials of the operator (tokens are the users'): the
  // real API is used in production, or anywhere CALENDLY_API_BASE is set.
  const calendlyBaseRaw = opt('CALENDLY_API_BASE');
  const calendlyBase = (calendlyBaseRaw ?? 'https://api.calendly.com').replace(/\/$/, '');
  if (calendlyBaseRaw) url('CALENDLY_API_BASE', calendlyBase, ['http:', 'https:']);
  const logLevel = str('LOG_LEVEL', nodeEnv === 'test' ? 'warn' : 'info');
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

  const corsOrigins: string[] = [];
  const corsDefault = nodeEnv === 'production' ? '' : [publicUrl, 'http://localhost:*', 'http://127.0.0.1:*'].join(',');
  for (const entry of (opt('CORS_ORIGINS') ?? corsDefault)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const anyPort = entry.endsWith(':*');
    const parsed = url('CORS_ORIGINS', anyPort ? entry.slice(0, -2) : entry, ['http:', 'https:']);
    if (!parsed) continue;
    if (parsed.pathname !== '/' || parsed.search || parsed.hash || (anyPort && parsed.port))
      problems.push(
        `CORS_ORIGINS: "${entry}" must be an origin (scheme://host[:port], or scheme://host:* for any port)`,
      );
    else corsOrigins.push(anyPort ? `${parsed.origin}:*` : parsed.origin);
  }
  const embeddingsUrl = opt('EMBEDDINGS_URL');
  const embeddings =
    embeddingsUrl && url('EMBEDDINGS_URL', embeddingsUrl, ['http:', 'https:'])
      ? {
          url: embeddingsUrl,
          model: str('EMBEDDINGS_MODEL', 'text-embedding-3-small'),
          apiKey: opt('EMBEDDINGS_API_KEY'),
        }
      : null;

  const connectorUrl = opt('CONNECTOR_URL');
  if (connectorUrl) url('CONNECTOR_URL', connectorUrl, ['http:', 'https:']);
  const leadPriceRaw = str('LEAD_PRICE_USD', '0.50');
  const connectorHeartbeatMs = int('CONNECTOR_HEARTBEAT_SECONDS', 15, 1, 600) * 1000;
  const leadPriceCents = Math.round(Number(leadPriceRaw) * 100);
  if (!/^\d+(\.\d{1,2})?$/.test(leadPriceRaw) || leadPriceCents < 1 || leadPriceCents > 100_000) {
    problems.push(
      `LEAD_PRICE_USD must be an amount in USD from 0.01 to 1000 with at most two decimals (got "${leadPriceRaw}")`,
    );
  }
  const smsPriceRaw = str('SMS_PRICE_USD', '0.0079');
  const smsSegmentPrice = Math.round(Number(smsPriceRaw) * 10_000);
  if (!/^\d+(\.\d{1,4})?$/.test(smsPriceRaw) || smsSegmentPrice < 1 || smsSegmentPrice > 100_000) {
    problems.push(
      `SMS_PRICE_USD must be an amount in USD from 0.0001 to 10 with at most four decimals (got "${smsPriceRaw}")`,
    );
  }
  const audioUrl = opt('AUDIO_SERVER_URL');
  const audioSecret = opt('AUDIO_SERVER_SECRET');
  if (audioUrl) url('AUDIO_SERVER_URL', audioUrl, ['http:', 'https:']);
  if (audioUrl && !audioSecret) problems.push('AUDIO_SERVER_SECRET is required with AUDIO_SERVER_URL');
  if (audioSecret && !/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/.test(audioSecret)) {
    problems.push('AUDIO_SERVER_SECRET must be whsec_ followed by a base64 key of at least 16 bytes');
  }

  const sandboxCalls = (opt('SANDBOX_CALLS')?.toLowerCase() ?? 'voice') as AudioConfig['sandboxCalls'];
  if (sandboxCalls !== 'voice' && sandboxCalls !== 'timer')
    problems.push(`SANDBOX_CALLS must be voice or timer (got "${sandboxCalls}")`);

  const deepgramKey = opt('DEEPGRAM_API_KEY');
  const deepgramBase = str('DEEPGRAM_API_BASE', 'wss://api.deepgram.com').replace(/\/+$/, '');
  url('DEEPGRAM_API_BASE', deepgramBase, ['wss:', 'ws:']);
  const sttUrl = opt('STT_URL')?.replace(/\/+$/, '') ?? null;
  if (sttUrl) url('STT_URL', sttUrl, ['http:', 'https:']);
  const llmUrl = opt('LLM_URL')?.replace(/\/+$/, '') ?? null;
  if (llmUrl) url('LLM_URL', llmUrl, ['http:', 'https:']);
  const sttProviderRaw = opt('STT_PROVIDER')?.toLowerCase() ?? null;
  let sttProvider: VoiceAgentConfig['sttProvider'] = deepgramKey ? 'deepgram' : sttUrl ? 'openai' : null;
  if (sttProviderRaw !== null) {
    if (!(STT_PROVIDERS as readonly string[]).includes(sttProviderRaw))
      problems.push(`STT_PROVIDER must be one of ${STT_PROVIDERS.join(', ')} (got "${sttProviderRaw}")`);
    else sttProvider = sttProviderRaw as VoiceAgentConfig['sttProvider'];
  }
  if (sttProvider === 'deepgram' && !deepgramKey) problems.push('STT_PROVIDER=deepgram needs DEEPGRAM_API_KEY');
  if (sttProvider === 'openai' && !sttUrl)
    problems.push(
      'STT_PROVIDER=openai needs STT_URL (an OpenAI-compatible API base such as https://api.openai.com/v1)',
    );

  const config: Config = {
    env: nodeEnv as Config['env'],
    host,
    port,
    dataDir,
    databaseUrl,
    masterKey,
    jwtSecret,
    jwtSecretRotate: bool('JWT_SECRET_ROTATE'),
    metricsPort,
    metricsToken,
    publicUrl,
    returnUrlOrigins,
    allowSandbox: bool('ALLOW_SANDBOX'),
    logLevel,
    trustProxy: bool('TRUST_PROXY'),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    unauthenticatedBodyLimitBytes: int('UNAUTHENTICATED_BODY_LIMIT_BYTES', 16 * 1024, 1024, 1024 * 1024),
    objectContentLimitBytes: int('OBJECT_CONTENT_LIMIT_BYTES', 8 * 1024 * 1024, 16, 512 * 1024 * 1024),
    relatedPageBytes: int('RELATED_PAGE_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    sessionTtlSeconds: int('SESSION_TTL_SECONDS', 24 * 3600, 60, 365 * 24 * 3600),
    authCacheMs: int('AUTH_CACHE_MS', 1000, 0, 60_000),
    rememberTtlSeconds: int('REMEMBER_TTL_SECONDS', 30 * 24 * 3600, 60, 365 * 24 * 3600),
    twoFactorPendingTtlSeconds: 10 * 60,
    passwordHash: { memoryCost: 19 * 1024, timeCost: 2 },
    twilio,
    smtp,
    emailFrom,
    oidcProviders,
    rateLimits: parseRateLimits(
      env,
      nodeEnv === 'development' ? developmentRateLimits(defaultRateLimits) : defaultRateLimits,
      problems,
    ),
    events: {
      maxStreamsPerUser: int('EVENTS_MAX_STREAMS_PER_USER', 20, 1, 10_000),
      keepAliveMs: int('EVENTS_KEEPALIVE_SECONDS', 15, 1, 3600) * 1000,
      maxBufferedBytes: int('EVENTS_MAX_BUFFERED_BYTES', 4 * 1024 * 1024, 64 * 1024, 1024 * 1024 * 1024),
      maxBufferedTotalBytes: int(
        'EVENTS_MAX_BUFFERED_TOTAL_BYTES',
        128 * 1024 * 1024,
        1024 * 1024,
        64 * 1024 * 1024 * 1024,
      ),
      recentBytes: int('EVENTS_RECENT_BYTES', 16 * 1024 * 1024, 0, 4 * 1024 * 1024 * 1024),
      coalesceMs: int('EVENTS_COALESCE_MS', 40, 0, 1000),
      slowClientTimeoutMs: int('EVENTS_SLOW_CLIENT_SECONDS', 30, 1, 3600) * 1000,
      pollIntervalMs: int('EVENTS_POLL_MS', 2000, 50, 600_000),
      gapWaitMs: int('EVENTS_GAP_WAIT_MS', 10_000, 100, 600_000),
      reauthIntervalMs: int('EVENTS_REAUTH_SECONDS', 60, 1, 86_400) * 1000,
    },
    sandboxCallbackDelayMs: 500,
    billing: {
      stripe,
      plansFile: dataFile('PLANS_FILE'),
      voicePricingFile: dataFile('VOICE_PRICING_FILE'),
      topupDefaultUsd,
      balanceCacheMs: 60_000,
      callConcurrencyPerUser: int('CALL_CONCURRENCY_PER_USER', 5, 1, 10_000),
      callMaxSeconds: int('CALL_MAX_SECONDS', 3600, 60, 7200),
      smsSegmentPrice: Number.isFinite(smsSegmentPrice) ? smsSegmentPrice : 79,
    },
    elevenlabs: elevenlabsKey ? { apiKey: elevenlabsKey, apiBase: elevenlabsBase } : null,
    calendly: calendlyBaseRaw || nodeEnv === 'production' ? { apiBase: calendlyBase } : null,
    databaseConnectTimeoutMs: int('DATABASE_CONNECT_TIMEOUT_SECONDS', 30, 0, 3600) * 1000,
    corsOrigins,
    warnings,
    knowledge: {
      maxFiles: int('KNOWLEDGE_MAX_FILES', 25, 1, 1000),
      maxFileBytes: int('KNOWLEDGE_MAX_FILE_BYTES', 50 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      crawlAllowPrivate: bool('CRAWL_ALLOW_PRIVATE'),
      crawlAllowOrigins: nodeEnv === 'production' ? [] : [publicUrl],
      crawlMaxBytes: int('CRAWL_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      crawlTimeoutMs: 15_000,
      searchCacheBytes: int('KNOWLEDGE_SEARCH_CACHE_MB', 256, 0, 65_536) * 1024 * 1024,
      extraction: {
        // One core is left to the event loop: by default one worker per core but one, at most 4.
        workers: int('KNOWLEDGE_EXTRACT_WORKERS', Math.max(1, Math.min(4, availableParallelism() - 1)), 1, 64),
        timeoutMs: int('KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
        memoryMb: int('KNOWLEDGE_EXTRACT_MEMORY_MB', 256, 32, 16_384),
        maxInflatedBytes: int('KNOWLEDGE_MAX_INFLATED_MB', 64, 1, 16_384) * 1024 * 1024,
        maxTextBytes: int('KNOWLEDGE_MAX_TEXT_MB', 16, 1, 4096) * 1024 * 1024,
        idleMs: 30_000,
      },
      quota: {
        documents: int('KNOWLEDGE_QUOTA_DOCUMENTS', 10_000, 1, 100_000_000),
        chunks: int('KNOWLEDGE_QUOTA_CHUNKS', 100_000, 1, 1_000_000_000),
        bytes: int('KNOWLEDGE_QUOTA_MB', 1024, 1, 16_777_216) * 1024 * 1024,
      },
    },
    embeddings,
    connector: {
      url: connectorUrl ? connectorUrl.replace(/\/$/, '') : null,
      token: opt('CONNECTOR_TOKEN'),
      idleTimeoutMs: int('CONNECTOR_IDLE_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
      leadPriceCents: Number.isFinite(leadPriceCents) ? leadPriceCents : 50,
      heartbeatMs: connectorHeartbeatMs,
      staleAfterMs: Math.max(60_000, 4 * connectorHeartbeatMs),
    },
    webhooks: {
      allowPrivate: bool('WEBHOOK_ALLOW_PRIVATE') || nodeEnv !== 'production',
      timeoutMs: int('WEBHOOK_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
      pollIntervalMs: int('WEBHOOK_POLL_MS', 1000, 10, 600_000),
    },
    audio: {
      url: audioUrl ? audioUrl.replace(/\/$/, '') : null,
      secret: audioSecret,
      sandboxStepMs: int('AUDIO_SANDBOX_STEP_MS', 1500, 1, 60_000),
      sandboxCalls,
      recording: opt('CALL_RECORDING') === null ? true : bool('CALL_RECORDING'),
    },
    temporarySessions: { numbers: temporaryNumbers, callTypesFile: dataFile('TEMPORARY_CALL_TYPES_FILE') },
    voiceAgent: {
      sttProvider,
      deepgram: deepgramKey ? { apiKey: deepgramKey, apiBase: deepgramBase } : null,
      openaiStt: sttUrl ? { url: sttUrl, apiKey: opt('STT_API_KEY'), model: str('STT_MODEL', 'whisper-1') } : null,
      llm: llmUrl ? { url: llmUrl, apiKey: opt('LLM_API_KEY'), model: str('LLM_MODEL', 'gpt-4o-mini') } : null,
      llmDeadlineMs: int('VOICE_LLM_DEADLINE_MS', 4000, 500, 60_000),
    },
    webCalls: {
      maxSeconds: int('WEB_CALL_MAX_SECONDS', 600, 5, 4 * 3600),
      concurrencyPerUser: int('WEB_CALL_CONCURRENCY_PER_USER', 2, 1, 1000),
    },
    mediaSockets: {
      unauthenticatedPerAddress: int('MEDIA_UNAUTHENTICATED_PER_ADDRESS', 8, 1, 100_000),
      unauthenticatedTotal: int('MEDIA_UNAUTHENTICATED_MAX', 200, 1, 100_000),
    },
    voice: {
      endpointMinMs: int('VOICE_ENDPOINT_MIN_MS', 500, 100, 10_000),
      endpointMaxMs: int('VOICE_ENDPOINT_MAX_MS', 3000, 100, 30_000),
      bargeInMs: int('VOICE_BARGE_IN_MS', 300, 60, 5000),
      llmDeadlineMs: int('VOICE_LLM_DEADLINE_MS', 4000, 500, 60_000),
      repromptMs: int('VOICE_REPROMPT_MS', 8000, 1000, 120_000),
      maxReprompts: int('VOICE_MAX_REPROMPTS', 2, 0, 10),
    },
  };
  if (config.voice.endpointMinMs > config.voice.endpointMaxMs)
    problems.push(
      `VOICE_ENDPOINT_MIN_MS (${config.voice.endpointMinMs}) must not exceed VOICE_ENDPOINT_MAX_MS (${config.voice.endpointMaxMs})`,
    );
  if (problems.length) throw new ConfigError(problems);
  return config;
}
