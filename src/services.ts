// The composition root: builds every store, provider and service once, and
// hands each service only what it uses.
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import type { Clock } from './lib/clock.js';
import { type SecretBox, createSecretBox } from './lib/secret-box.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { ApiKeyStore } from './modules/api-keys/store.js';
import { CredentialAuthenticator } from './modules/auth/authenticator.js';
import { EventTickets } from './modules/events/tickets.js';
import type { AuthContext } from './http/auth.js';
import { BackgroundMail } from './modules/auth/account-mail.js';
import { CredentialCache } from './modules/auth/credential-cache.js';
import { createDataServices } from './modules/data/create-services.js';
import { createBillingServices } from './modules/billing/create-services.js';
import { type Catalog, loadCatalog } from './modules/billing/catalog.js';
import { createPersonaServices } from './modules/personas/create-services.js';
import { createIntegrationServices } from './modules/integrations/create-services.js';
import type { BillingAccount } from './modules/billing/account.js';
import { createConnectServices } from './modules/connect/create-services.js';
import { ExternalSignInService } from './modules/auth/external-service.js';
import { ExternalIdentityStore } from './modules/auth/external-store.js';
import { PasswordHasher } from './modules/auth/passwords.js';
import { PasswordResetService } from './modules/auth/reset-service.js';
import { PasswordResetStore } from './modules/auth/reset-store.js';
import { AuthService } from './modules/auth/service.js';
import { UserStore } from './modules/auth/store.js';
import { TokenService } from './modules/auth/tokens.js';
import { PhoneVerificationService } from './modules/auth/verification-service.js';
import { PhoneCodeStore } from './modules/auth/verification-store.js';
import { TwoFactorService } from './modules/auth/two-factor-service.js';
import { TwoFactorStore } from './modules/auth/two-factor-store.js';
import { EventRecorder } from './modules/events/recorder.js';
import { createEventStreams } from './modules/events/service.js';
import { AuditLog } from './modules/platform/audit.js';
import { Housekeeping } from './modules/platform/housekeeping.js';
import { IdempotencyService } from './modules/platform/idempotency.js';
import { IdempotencyStore } from './modules/platform/idempotency-store.js';
import { SingleUseTokens } from './modules/platform/single-use.js';
import { SingleUseStore } from './modules/platform/single-use-store.js';
import { RateLimiter } from './modules/platform/rate-limiter.js';
import { PlatformStore } from './modules/platform/store.js';
import { type Providers, createProviders } from './providers/index.js';
import { createIdentityProviders } from './providers/oauth/oidc.js';
import { Outbox } from './providers/outbox.js';
import type { Secrets } from './secrets.js';
import { createTelephonyServices } from './modules/telephony/create-services.js';
import { createKnowledgeServices } from './modules/knowledge/create-services.js';
import { createEmbeddingsProvider } from './providers/embeddings/index.js';

/** Age after which housekeeping returns a credit hold nobody settled (longer than any call or purchase runs). */
const ABANDONED_HOLD_MS = 24 * 3600_000;
import { generateWebhookSecret } from './lib/standard-webhooks.js';
import { createWebhookServices } from './modules/webhooks/create-services.js';
import { createCallServices, createCallSessionServices } from './modules/calls/create-services.js';
import { createVoiceServices } from './modules/calls/voice-services.js';
import { InboundCalls } from './modules/calls/inbound-calls.js';
import { SandboxInboundCalls } from './modules/calls/sandbox-inbound.js';
import { WebCalls } from './modules/calls/web-calls.js';
import { createPocketsphinxSpeechToText } from './providers/speech-to-text/pocketsphinx.js';
import { createVoiceToolServices } from './modules/calls/voice-tools.js';
import { type VoiceAgentProviders, createVoiceAgentProviders } from './providers/voice-agent.js';
import { STALLED_AFTER_MS } from './modules/calls/service.js';
import { createTemporarySessionServices } from './modules/temporary-sessions/create-services.js';

export interface ServiceDeps {
  config: Config;
  database: DatabaseHandle;
  secrets: Secrets;
  clock: Clock;
  /** Replaces individual providers (tests point real clients at local fakes through config instead). */
  providers?: Partial<Providers>;
  /** Replaces the billing account (tests inject an in-memory one of our own interface). */
  billing?: BillingAccount;
  /** Replaces the voice agent's providers (tests). */
  voiceAgent?: VoiceAgentProviders;
  /** Where services log what they cannot answer with (the app's logger). */
  log?: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

const silentLog = { warn: () => {}, error: () => {} };


export function createServices(deps: ServiceDeps) {
  const { config, database, secrets, clock } = deps;
  const db = database.db;
  const platformStore = new PlatformStore(db);
  const audit = new AuditLog(platformStore, clock);
  const limiter = new RateLimiter(platformStore, clock);
  const outbox = new Outbox(platformStore, clock);
  const idempotency = new IdempotencyService(new IdempotencyStore(db), clock);
  const singleUse = new SingleUseTokens(new SingleUseStore(db), clock);
  const billingCatalog = loadCatalog(config.billing);
  const audioSecret = config.audio.secret ?? generateWebhookSecret();
  const providers: Providers = { ...createProviders(config, outbox, secrets.masterKey, billingCatalog.plans, clock, audioSecret), ...deps.providers };
  const secretBox: SecretBox = createSecretBox(secrets.masterKey);

  const credentialCache = new CredentialCache<AuthContext>(clock, config.authCacheMs);
  const users = new UserStore(db, credentialCache);
  const tokens = new TokenService(secrets.jwtSecret, clock);
  const passwords = new PasswordHasher(config.passwordHash);
  const apiKeys = new ApiKeyService(new ApiKeyStore(db, credentialCache), audit, clock);
  const authenticator = new CredentialAuthenticator(tokens, users, apiKeys, credentialCache, () => clock.now());
  const accountMail = new BackgroundMail(providers.email);
  const auth = new AuthService(config, users, tokens, passwords, accountMail, limiter, audit, clock);
  const externalStore = new ExternalIdentityStore(db);
  const phoneCodes = new PhoneCodeStore(db, credentialCache);
  const resetStore = new PasswordResetStore(db, credentialCache);
  const externalSignIn = new ExternalSignInService(config, createIdentityProviders(config.oidcProviders), externalStore, users, auth, limiter, audit, clock);
  const phoneVerification = new PhoneVerificationService(config, users, phoneCodes, auth, providers.sms, limiter, audit, clock, secrets.masterKey);
  const passwordReset = new PasswordResetService(config, users, resetStore, auth, passwords, accountMail, limiter, audit, clock);
  const twoFactor = new TwoFactorService(config, new TwoFactorStore(db, credentialCache), secretBox, auth, limiter, audit, clock);
  const eventRecorder = new EventRecorder(clock, database.dialect);
  const eventStreams = createEventStreams(database, eventRecorder, config.events);
  const eventTickets = new EventTickets(secrets.jwtSecret, singleUse, authenticator, clock);
  const data = createDataServices({ db, dialect: database.dialect, secretBox, eventRecorder, clock, objectContentLimitBytes: config.objectContentLimitBytes, relatedPageBytes: config.relatedPageBytes, singleUse });
  const billing = createBillingServices({
    db,
    dialect: database.dialect,
    settings: config.billing,
    catalog: billingCatalog,
    publicUrl: config.publicUrl,
    returnUrlOrigins: config.returnUrlOrigins,
    payments: providers.payments,
    users: (userId) => users.findById(userId),
    limiter,
    sessionsPerUser: config.rateLimits.billingSessionsPerUser,
    clock,
  });
  // The caller's billing account (tests may replace it with an in-memory one of the same interface).
  const billingAccount = deps.billing ?? billing.account;
  const knowledge = createKnowledgeServices({ db, dialect: database.dialect, clock, config: config.knowledge, embeddings: createEmbeddingsProvider(config) });
  const telephony = createTelephonyServices({ db, providers: providers.telephony, billing: billingAccount, data, knowledge: knowledge.lookup, eventRecorder, limiter, clock, publicUrl: config.publicUrl, smsSendPerUser: config.rateLimits.smsSendPerUser, smsSegmentPrice: config.billing.smsSegmentPrice, singleUse });
  const personas = createPersonaServices({
    voice: providers.voice,
    signedPayloads: data.signedPayloads,
    clock,
    previewLimits: { limiter, perUser: config.rateLimits.voicePreviewPerUser, charactersPerUser: config.rateLimits.voicePreviewCharactersPerUser },
  });
  const integrations = createIntegrationServices({ db, scheduling: providers.scheduling, secretBox, clock });
  // A number whose subscription goes unpaid is suspended (and restored when paid): billing announces, telephony follows.
  billing.events.onItemStatus((change) => telephony.numbers.followSubscription(change));
  const connect = createConnectServices({ db, dialect: database.dialect, data, connector: providers.connector, billing: billingAccount, clock, config: config.connector });
  const webhooks = createWebhookServices({ db, dialect: database.dialect, secretBox, clock, config: config.webhooks });
  const voice = createVoiceServices({
    db,
    clock,
    secretBox,
    publicUrl: config.publicUrl,
    telephony: providers.telephony,
    twilioFrom: config.twilio?.from ?? null,
    sandboxCalls: config.audio.sandboxCalls,
    recording: config.audio.recording,
    serviceTokens: data.serviceTokens,
    singleUse,
    providers: deps.voiceAgent ?? createVoiceAgentProviders(config.voiceAgent, providers.voice, { pocketsphinx: () => createPocketsphinxSpeechToText() }),
    tools: createVoiceToolServices(knowledge.knowledge, integrations.integrations),
    events: eventRecorder,
    maxRecordingBytes: config.objectContentLimitBytes,
    data,
    settings: config.voice,
    log: deps.log ?? silentLog,
  });
  // The built-in voice agent carries calls (through Twilio, or the sandbox carrier without it), unless an external audio server is configured.
  if (voice.carrier && !config.audio.url && !deps.providers?.audio) providers.audio = voice.carrier;
  const calls = createCallServices({ db, dialect: database.dialect, eventRecorder, webhooks: webhooks.webhooks, audio: providers.audio, data, billing: billingAccount, pricing: callPricing(config, billingCatalog), clock, audioSecret, publicUrl: config.publicUrl });
  voice.bindReporter((...args) => calls.calls.report(...args));
  const inboundCalls = new InboundCalls({
    providers: providers.telephony,
    publicUrl: config.publicUrl,
    clock,
    route: (numberId) => telephony.inbound.routeFor(numberId),
    records: data.records,
    personas: personas.personas,
    integrations: integrations.integrations,
    calls: calls.calls,
    store: voice.store,
    tokens: voice.tokens,
    secretBox,
    report: (...args) => calls.calls.report(...args),
  });
  // POST /api/sandbox/calls/inbound: while the sandbox telephony provider can ring numbers, never in production.
  const sandboxControl = providers.telephony.list.find((p) => p.sandbox)?.calls;
  const sandboxInbound = sandboxControl?.ring && config.env !== 'production' ? new SandboxInboundCalls({ numbers: telephony.numbers, control: { ring: (request) => sandboxControl.ring!(request) }, store: voice.store, clock, publicUrl: config.publicUrl }) : null;
  // Calls from a browser: free test calls through the same voice runner (DESIGN.md "Calls from a browser").
  const webCalls = new WebCalls({
    calls: calls.calls,
    store: voice.store,
    tokens: voice.tokens,
    secretBox,
    records: data.records,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
    limiter,
    rateLimit: config.rateLimits.webCallsPerUser,
    settings: config.webCalls,
    clock: voice.clock,
    publicUrl: config.publicUrl,
    report: (...args) => calls.calls.report(...args),
    log: deps.log ?? silentLog,
  });
  const callSessions = createCallSessionServices({ signedPayloads: data.signedPayloads, calls: calls.calls, numbers: telephony.numbers, knowledge: knowledge.knowledge, integrations: integrations.integrations, personas: personas.personas, webhooks: webhooks.webhooks });
  const temporarySessions = createTemporarySessionServices({
    db,
    config: config.temporarySessions,
    tokens: data.serviceTokens,
    singleUse,
    sms: providers.sms,
    email: providers.email,
    calls: calls.calls,
    sessions: callSessions.sessions,
    limiter,
    rateLimits: config.rateLimits,
    clock,
    masterKey: secrets.masterKey,
    firstName: async (userId) => (await users.findById(userId))?.first_name ?? null,
  });

  // The longest rate-limit window is an hour; a day-old window can only restart.
  const housekeeping = new Housekeeping(
    {
      revokedTokens: (now) => users.deleteExpiredRevocations(now),
      rateLimits: (now) => platformStore.deleteStaleRateLimits(now - 24 * 3600_000),
      phoneCodes: (now) => phoneCodes.deleteExpired(now),
      passwordResets: (now) => resetStore.deleteExpired(now),
      externalFlows: (now) => externalStore.deleteExpired(now),
      // Holds no caller closed within a day (it crashed or forgot): returned whole to the balance.
      abandonedHolds: async () => void (await billing.account.settleAbandoned(ABANDONED_HOLD_MS)),
      idempotencyKeys: (now) => idempotency.purgeExpired(now),
      singleUseTokens: (now) => singleUse.purgeExpired(now),
      abandonedLeadJobs: async () => void (await connect.jobs.recoverAbandoned()),
      abandonedCalls: async () => void (await calls.calls.finishAbandoned()),
      // Calls whose audio server went quiet (a sandbox call whose process stopped) end as failed.
      stalledCalls: async () => void (await calls.calls.failStalled()),
      // Charges whose call was never recorded (a start cut off, or an authorizeCall nobody settled) after the longest call.
      orphanCallCharges: async () => void (await calls.charges?.closeOrphans(STALLED_AFTER_MS + config.billing.callMaxSeconds * 1000)),
      // After abandonedCalls: a call it just finished gets its summary in the same pass.
      temporarySessions: (now) => temporarySessions.temporary.housekeep(now),
    },
    clock,
  );

  return { config, database, clock, secretBox, housekeeping, platformStore, audit, limiter, outbox, idempotency, singleUse, providers, users, tokens, passwords, apiKeys, authenticator, accountMail, auth, externalSignIn, phoneVerification, passwordReset, twoFactor, eventRecorder, eventStreams, eventTickets, data, billing, personas, integrations, telephony, knowledge, connect, webhooks, calls, callSessions, temporarySessions, voice, inboundCalls, sandboxInbound, webCalls };
}

export type Services = ReturnType<typeof createServices>;

/** What calls cost: the voice pricing data, the concurrency limit (a plan may raise it) and the longest call. */
function callPricing(config: Config, catalog: Catalog) {
  const { callConcurrencyPerUser, callMaxSeconds } = config.billing;
  return {
    rate: (country: string, direction: 'inbound' | 'outbound') => catalog.voiceRate(country, direction),
    concurrencyLimit: (planKey: string | null) => Math.max(callConcurrencyPerUser, (planKey ? catalog.plan(planKey)?.callConcurrency : undefined) ?? 0),
    defaultMaxSeconds: callMaxSeconds,
  };
}
