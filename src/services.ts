// The composition root: builds the providers, then each area in dependency
// order through its own create-services.ts, handing each only what it uses
// (its services' collaborators and its slice of the configuration).
import { type Config, authSettings } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import type { AuthContext } from './http/auth.js';
import { type Clock, type TimerClock, systemClock } from './lib/clock.js';
import { type SecretBox, createSecretBox } from './lib/secret-box.js';
import { generateWebhookSecret } from './lib/standard-webhooks.js';
import { createAgentTestServices } from './modules/agent-tests/create-services.js';
import { createAnalysisServices } from './modules/analysis/create-services.js';
import { createApiKeyServices } from './modules/api-keys/create-services.js';
import { createAuthServices } from './modules/auth/create-services.js';
import { CredentialCache } from './modules/auth/credential-cache.js';
import type { BillingAccount } from './modules/billing/account.js';
import { type Catalog, loadCatalog } from './modules/billing/catalog.js';
import { createBillingServices } from './modules/billing/create-services.js';
import { createCallArea, createCallStores } from './modules/calls/create-services.js';
import type { Metrics } from './modules/platform/metrics.js';
import { STALLED_AFTER_MS } from './modules/calls/service.js';
import { createVoiceAgentServices, createVoiceCarrier } from './modules/voice-agent/create-services.js';
import { createVoiceToolServices } from './modules/voice-agent/tools.js';
import { createCampaignServices, createDoNotCallServices } from './modules/campaigns/create-services.js';
import { DEFAULT_DIALER_SETTINGS } from './modules/campaigns/dialer.js';
import { createConnectServices } from './modules/connect/create-services.js';
import { createCustomToolServices } from './modules/custom-tools/create-services.js';
import { createDataServices } from './modules/data/create-services.js';
import { createEventServices } from './modules/events/create-services.js';
import { createIntegrationServices } from './modules/integrations/create-services.js';
import { createKnowledgeServices } from './modules/knowledge/create-services.js';
import { createPathwayServices } from './modules/pathways/create-services.js';
import { createPersonaServices } from './modules/personas/create-services.js';
import { createPlatformServices } from './modules/platform/create-services.js';
import { Housekeeping } from './modules/platform/housekeeping.js';
import { JobQueue } from './modules/platform/jobs.js';
import { createTelephonyServices } from './modules/telephony/create-services.js';
import { createTemporarySessionServices } from './modules/temporary-sessions/create-services.js';
import { createWebhookServices } from './modules/webhooks/create-services.js';
import { createEmbeddingsProvider } from './providers/embeddings/index.js';
import { type Providers, createProviders } from './providers/index.js';
import { createIdentityProviders } from './providers/oauth/oidc.js';
import { OfflineCallerVoice } from './providers/call-speech/offline-caller.js';
import { SandboxDialogue } from './providers/language-model/sandbox.js';
import { SandboxSchedulingProvider } from './providers/scheduling/sandbox.js';
import { createPocketsphinxSpeechToText } from './providers/speech-to-text/pocketsphinx.js';
import { type VoiceAgentProviders, createVoiceAgentProviders } from './providers/voice-agent.js';
import type { Secrets } from './secrets.js';

/** Age after which housekeeping returns a credit hold nobody settled (longer than any call or purchase runs). */
const ABANDONED_HOLD_MS = 24 * 3600_000;

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
  /** What the metrics hear (ledger writes, failed webhook attempts, the calls carried); the app's. */
  metrics?: Metrics;
  /** Where services log what they cannot answer with (the app's logger). */
  log?: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

const silentLog = { warn: () => {}, error: () => {} };

export function createServices(deps: ServiceDeps) {
  const { config, database, secrets, clock } = deps;
  const db = database.db;
  const { dialect } = database;
  const log = deps.log ?? silentLog;
  const { metrics } = deps;
  const platform = createPlatformServices({ db, clock });
  const { limiter, audit, singleUse } = platform;
  // The one durable job queue (agent test runs, post-call analysis): started and stopped with the app.
  const jobs = JobQueue.create(db, dialect, clock);
  jobs.reportErrorsTo(log);
  const billingCatalog = loadCatalog(config.billing);
  const audioSecret = config.audio.secret ?? generateWebhookSecret();
  const providers: Providers = {
    ...createProviders(config, platform.outbox, secrets.masterKey, billingCatalog.plans, clock, audioSecret),
    ...deps.providers,
  };
  const secretBox: SecretBox = createSecretBox(secrets.masterKey);
  // Sessions and API keys share one cache of recent credential lookups, so ending either takes effect at once on this instance.
  const credentialCache = new CredentialCache<AuthContext>(clock, config.authCacheMs);

  const apiKeys = createApiKeyServices({ db, credentialCache, audit, clock });
  const auth = createAuthServices({
    db,
    settings: authSettings(config),
    passwordHash: config.passwordHash,
    jwtSecret: secrets.jwtSecret,
    masterKey: secrets.masterKey,
    secretBox,
    credentialCache,
    apiKeys: apiKeys.apiKeys,
    email: providers.email,
    sms: providers.sms,
    identityProviders: createIdentityProviders(config.oidcProviders),
    limiter,
    audit,
    clock,
  });
  const events = createEventServices({
    database,
    config: config.events,
    jwtSecret: secrets.jwtSecret,
    singleUse,
    authenticator: auth.authenticator,
    clock,
  });
  const { eventRecorder } = events;
  const data = createDataServices({
    db,
    dialect,
    secretBox,
    eventRecorder,
    clock,
    objectContentLimitBytes: config.objectContentLimitBytes,
    relatedPageBytes: config.relatedPageBytes,
    singleUse,
  });
  const billing = createBillingServices({
    db,
    dialect,
    settings: config.billing,
    catalog: billingCatalog,
    publicUrl: config.publicUrl,
    returnUrlOrigins: config.returnUrlOrigins,
    payments: providers.payments,
    users: (userId) => auth.users.findById(userId),
    limiter,
    sessionsPerUser: config.rateLimits.billingSessionsPerUser,
    clock,
    ...(metrics ? { onLedgerWrite: () => metrics.ledgerWrites.inc() } : {}),
  });
  // The caller's billing account (tests may replace it with an in-memory one of the same interface).
  const billingAccount = deps.billing ?? billing.account;
  // Pathways named by id are read from the owner's conversational-pathways store.
  const pathways = createPathwayServices({ records: data.records });
  const knowledge = createKnowledgeServices({
    db,
    dialect,
    clock,
    config: config.knowledge,
    embeddings: createEmbeddingsProvider(config),
  });
  const telephony = createTelephonyServices({
    db,
    providers: providers.telephony,
    billing: billingAccount,
    data,
    knowledge: knowledge.lookup,
    eventRecorder,
    limiter,
    clock,
    publicUrl: config.publicUrl,
    smsSendPerUser: config.rateLimits.smsSendPerUser,
    smsSegmentPrice: config.billing.smsSegmentPrice,
    singleUse,
  });
  const personas = createPersonaServices({
    voice: providers.voice,
    signedPayloads: data.signedPayloads,
    clock,
    previewLimits: {
      limiter,
      perUser: config.rateLimits.voicePreviewPerUser,
      charactersPerUser: config.rateLimits.voicePreviewCharactersPerUser,
      localPerUser: config.rateLimits.localVoicePreviewPerUser,
    },
  });
  const integrations = createIntegrationServices({ db, scheduling: providers.scheduling, secretBox, clock });
  // A number whose subscription goes unpaid is suspended (and restored when paid): billing announces, telephony follows.
  billing.events.onItemStatus((change) => telephony.numbers.followSubscription(change));
  const connect = createConnectServices({
    db,
    dialect,
    data,
    connector: providers.connector,
    billing: billingAccount,
    clock,
    config: config.connector,
  });
  const webhooks = createWebhookServices({
    db,
    dialect,
    secretBox,
    clock,
    config: config.webhooks,
    ...(metrics ? { onAttemptFailed: () => metrics.webhookFailures.inc() } : {}),
  });
  // Custom HTTP tools are signed and filtered as webhooks are; the voice integration invokes them through this.
  const customTools = createCustomToolServices({
    webhooks: webhooks.webhooks,
    secretBox,
    clock,
    allowPrivate: config.webhooks.allowPrivate,
    log,
  });
  const voiceAgent =
    deps.voiceAgent ??
    createVoiceAgentProviders(config.voiceAgent, providers.voice, {
      pocketsphinx: () => createPocketsphinxSpeechToText(),
    });
  // Every outbound call asks the account's do-not-call list (the campaigns area keeps it); the agent's opt_out tool adds to it.
  const { doNotCall } = createDoNotCallServices({ db, clock });
  // One store per table, shared by the calls area and the voice agent.
  const callStores = createCallStores(db, dialect);
  const carrier = createVoiceCarrier({
    store: callStores.sessions,
    clock,
    secretBox,
    publicUrl: config.publicUrl,
    telephony: providers.telephony,
    twilioFrom: config.twilio?.from ?? null,
    sandboxCalls: config.audio.sandboxCalls,
    serviceTokens: data.serviceTokens,
    singleUse,
    log,
  });
  // The built-in voice agent carries calls (through Twilio, or the sandbox carrier without it), unless an audio server is configured or given.
  const keepAudio = Boolean(config.audio.url || deps.providers?.audio);
  const audio = carrier.carrier && !keepAudio ? carrier.carrier : providers.audio;
  const callArea = createCallArea({
    db,
    dialect,
    stores: callStores,
    clock,
    publicUrl: config.publicUrl,
    audio,
    audioSecret,
    data,
    eventRecorder,
    webhooks: webhooks.webhooks,
    billing: billingAccount,
    pricing: callPricing(config, billingCatalog),
    doNotCall,
    telephony: providers.telephony,
    numbers: telephony.numbers,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
    pathways: pathways.pathways,
    customTools: customTools.customTools,
  });
  const voice = createVoiceAgentServices({
    db,
    clock,
    secretBox,
    publicUrl: config.publicUrl,
    production: config.env === 'production',
    telephony: providers.telephony,
    carrier,
    calls: callArea.calls.calls,
    legs: callArea.transfers,
    designs: callArea.designs,
    recording: config.audio.recording,
    providers: voiceAgent,
    tools: createVoiceToolServices(knowledge.knowledge, integrations.integrations, doNotCall),
    customTools: customTools.customTools,
    // A pathway's SMS node texts from the call's own number, through the SMS service (held, charged, rate-limited).
    sendSms: async (userId, ownNumber, to, body) => {
      const number = ownNumber ? (await telephony.numbers.list(userId)).find((n) => n.phoneNumber === ownNumber) : null;
      if (!number) throw new Error("the call's number is not one of the account's numbers");
      await telephony.sms.send(userId, { phoneNumberId: number.id, to, body });
    },
    events: eventRecorder,
    maxRecordingBytes: config.objectContentLimitBytes,
    records: data.records,
    settings: config.voice,
    mediaAdmission: {
      perAddress: config.mediaSockets.unauthenticatedPerAddress,
      total: config.mediaSockets.unauthenticatedTotal,
    },
    ...(metrics ? { observers: voiceObservers(metrics) } : {}),
    webCalls: { settings: config.webCalls, perUser: config.rateLimits.webCallsPerUser },
    numbers: telephony.numbers,
    routeFor: (numberId) => telephony.inbound.routeFor(numberId),
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
    limiter,
    log,
  });
  const { calls } = callArea;
  // After each call is accounted for, its analysis is queued (by the configured model, else the sandbox analyser).
  const analysis = createAnalysisServices({
    db,
    dialect,
    defineSqliteAggregate: database.defineSqliteAggregate,
    clock,
    records: data.records,
    chargedCents: (ids) => callArea.views.chargedCents(ids),
    events: eventRecorder,
    webhooks: webhooks.webhooks,
    jobs,
    model: voiceAgent.languageModel,
  });
  calls.calls.onFinished(async (session) => {
    try {
      await analysis.analysis.callFinished(session);
    } catch (err) {
      log.error({ err, sessionId: session.id }, 'analysis: the call analysis was not queued');
    }
  });
  const campaigns = createCampaignServices({
    db,
    dialect,
    clock,
    secretBox,
    doNotCall,
    records: data.records,
    numbers: telephony.numbers,
    events: eventRecorder,
    webhooks: webhooks.webhooks,
    calls: calls.calls,
    sessions: callArea.callSessions.sessions,
    charges: calls.charges,
    instanceId: carrier.heartbeat.instanceId,
    defaultMaxConcurrent: config.billing.callConcurrencyPerUser,
    dialer: DEFAULT_DIALER_SETTINGS,
    log,
  });
  // Agent tests run the agent of a web call, with the call's model and tools, free; voice tests speak with the offline caller voice.
  let callerVoice: OfflineCallerVoice | null | undefined;
  const agentTests = createAgentTestServices({
    db,
    dialect,
    jobs,
    events: eventRecorder,
    secretBox,
    clock: 'setTimeout' in clock ? (clock as TimerClock) : systemClock,
    webCalls: voice.webCalls,
    model: voiceAgent.languageModel ?? new SandboxDialogue({ clock }),
    llmDeadlineMs: voiceAgent.llmDeadlineMs,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    // The same integration rows against the sandbox calendar: a test books nothing real.
    sandboxIntegrations: createIntegrationServices({
      db,
      scheduling: new SandboxSchedulingProvider(),
      secretBox,
      clock,
    }).integrations,
    settings: { maxRunsPerUser: 20, concurrency: 8 },
    analyse: (facts, settings) => analysis.analysis.analysis(facts, settings),
    customTools: customTools.customTools,
    voice: {
      startWebCall: (userId, input) => voice.webCalls.start(userId, input),
      callView: (userId, id) => callArea.views.get(userId, id),
      get callerVoice() {
        // flite's slt speaks at 16 kHz, as a browser's microphone sends; espeak-ng when flite is not installed.
        callerVoice ??=
          OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'slt' }) ?? OfflineCallerVoice.create();
        return callerVoice;
      },
    },
  });
  const temporarySessions = createTemporarySessionServices({
    db,
    config: config.temporarySessions,
    tokens: data.serviceTokens,
    singleUse,
    sms: providers.sms,
    email: providers.email,
    calls: calls.calls,
    sessions: callArea.callSessions.sessions,
    limiter,
    rateLimits: config.rateLimits,
    clock,
    masterKey: secrets.masterKey,
    firstName: async (userId) => (await auth.users.findById(userId))?.first_name ?? null,
  });

  // The longest rate-limit window is an hour; a day-old window can only restart.
  const housekeeping = new Housekeeping(
    {
      revokedTokens: auth.expired.revokedTokens,
      rateLimits: (now) => platform.platformStore.deleteStaleRateLimits(now - 24 * 3600_000),
      phoneCodes: auth.expired.phoneCodes,
      passwordResets: auth.expired.passwordResets,
      externalFlows: auth.expired.externalFlows,
      // Holds no caller closed within a day (it crashed or forgot): returned whole to the balance.
      abandonedHolds: async () => void (await billing.account.settleAbandoned(ABANDONED_HOLD_MS)),
      idempotencyKeys: (now) => platform.idempotency.purgeExpired(now),
      // Jobs that ended a week ago: their results live with their areas (runs, analyses).
      endedJobs: (now) => jobs.purgeEnded(now - 7 * 24 * 3600_000),
      singleUseTokens: (now) => singleUse.purgeExpired(now),
      abandonedLeadJobs: async () => void (await connect.jobs.recoverAbandoned()),
      abandonedCalls: async () => void (await calls.calls.finishAbandoned()),
      // Calls whose audio server went quiet (a sandbox call whose process stopped) end as failed.
      stalledCalls: async () => void (await calls.calls.failStalled()),
      // Charges whose call was never recorded (a start cut off, or an authorizeCall nobody settled) after the longest call.
      orphanCallCharges: async () =>
        void (await calls.charges?.closeOrphans(STALLED_AFTER_MS + config.billing.callMaxSeconds * 1000)),
      // After abandonedCalls: a call it just finished gets its summary in the same pass.
      temporarySessions: (now) => temporarySessions.temporary.housekeep(now),
    },
    clock,
  );

  const {
    users,
    tokens,
    passwords,
    authenticator,
    accountMail,
    externalSignIn,
    phoneVerification,
    passwordReset,
    twoFactor,
  } = auth;
  const { eventStreams, eventTickets } = events;
  const { callSessions, transfers, views: callViews } = callArea;
  const { inboundCalls, sandboxInbound, webCalls, mediaSockets } = voice;
  return {
    config,
    database,
    clock,
    secretBox,
    housekeeping,
    jobs,
    analysis,
    ...platform,
    // The audio server calls go to: the voice agent's carrier unless one is configured.
    providers: { ...providers, audio },
    users,
    tokens,
    passwords,
    apiKeys: apiKeys.apiKeys,
    authenticator,
    accountMail,
    auth: auth.auth,
    externalSignIn,
    phoneVerification,
    passwordReset,
    twoFactor,
    eventRecorder,
    eventStreams,
    eventTickets,
    data,
    billing,
    personas,
    integrations,
    telephony,
    knowledge,
    pathways,
    customTools,
    connect,
    webhooks,
    calls,
    callSessions,
    campaigns,
    temporarySessions,
    voice,
    inboundCalls,
    sandboxInbound,
    webCalls,
    transfers,
    mediaSockets,
    callViews,
    agentTests: agentTests.agentTests,
  };
}

export type Services = ReturnType<typeof createServices>;

/** What calls cost: the voice pricing data, the concurrency limit (a plan may raise it) and the longest call. */
function callPricing(config: Config, catalog: Catalog) {
  const { callConcurrencyPerUser, callMaxSeconds } = config.billing;
  return {
    rate: (country: string, direction: 'inbound' | 'outbound') => catalog.voiceRate(country, direction),
    concurrencyLimit: (planKey: string | null) =>
      Math.max(callConcurrencyPerUser, (planKey ? catalog.plan(planKey)?.callConcurrency : undefined) ?? 0),
    defaultMaxSeconds: callMaxSeconds,
  };
}

/** The voice agent's measurements, in the metrics' units (seconds). */
function voiceObservers(metrics: Metrics) {
  return {
    turnLatency: (latency: Record<string, number | undefined>) => metrics.observeVoiceLatency(latency),
    frameLateness: (ms: number) => metrics.voiceFrameLateness.observe(ms / 1000),
    recognitionTime: (ms: number) => metrics.voiceRecognition.observe(ms / 1000),
    callerAudioDropped: (ms: number) => metrics.callerAudioDropped.inc(ms / 1000),
  };
}
