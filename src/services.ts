// The composition root: builds the providers, then each area in dependency
// order through its own create-services.ts, handing each only what it uses
// (its services' collaborators and its slice of the configuration). Nothing
// is assigned after it is built; areas that hear of another's events
// subscribe when they are built (billing's item status, a call's end).
import { type Config, authSettings } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { createHousekeeping } from './housekeeping.js';
import type { AuthContext } from './http/auth.js';
import { type Clock, type TimerClock, systemClock } from './lib/clock.js';
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
import type { Log } from './modules/platform/core.js';
import type { Metrics } from './modules/platform/metrics.js';
import { createTelephonyServices } from './modules/telephony/create-services.js';
import { createTemporarySessionServices } from './modules/temporary-sessions/create-services.js';
import { createVoiceAgentServices, createVoiceCarrier } from './modules/voice-agent/create-services.js';
import { createVoiceToolServices } from './modules/voice-agent/tools.js';
import { createWebhookServices } from './modules/webhooks/create-services.js';
import { OfflineCallerVoice } from './providers/call-speech/offline-caller.js';
import { createEmbeddingsProvider } from './providers/embeddings/index.js';
import { type Providers, createProviders } from './providers/index.js';
import { SandboxDialogue } from './providers/language-model/sandbox.js';
import { createIdentityProviders } from './providers/oauth/oidc.js';
import { SandboxSchedulingProvider } from './providers/scheduling/sandbox.js';
import { createPocketsphinxSpeechToText } from './providers/speech-to-text/pocketsphinx.js';
import { type VoiceAgentProviders, createVoiceAgentProviders } from './providers/voice-agent.js';
import type { Secrets } from './secrets.js';

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
  log?: Log;
}

const silentLog = { warn: () => {}, error: () => {} };

export function createServices(deps: ServiceDeps) {
  const { config, database, secrets, clock, metrics } = deps;
  const log = deps.log ?? silentLog;
  const platform = createPlatformServices({ database, clock, masterKey: secrets.masterKey, log });
  // What most areas are built with (the database, the clock, the secret box, the platform's pieces, the log); each takes the parts its deps name.
  const { core, limiter, jobs } = platform;
  const catalog = loadCatalog(config.billing);
  const audioSecret = config.audio.secret ?? generateWebhookSecret();
  const providers: Providers = {
    ...createProviders(config, platform.outbox, secrets.masterKey, catalog.plans, clock, audioSecret),
    ...deps.providers,
  };
  const { rateLimits, publicUrl } = config;
  // Sessions and API keys share one cache of recent credential lookups, so ending either takes effect at once on this instance.
  const credentialCache = new CredentialCache<AuthContext>(clock, config.authCacheMs);
  const apiKeys = createApiKeyServices({ ...core, credentialCache });
  const auth = createAuthServices({
    ...core,
    settings: authSettings(config),
    passwordHash: config.passwordHash,
    jwtSecret: secrets.jwtSecret,
    masterKey: secrets.masterKey,
    credentialCache,
    apiKeys: apiKeys.apiKeys,
    email: providers.email,
    sms: providers.sms,
    identityProviders: createIdentityProviders(config.oidcProviders),
  });
  const { authenticator } = auth;
  const events = createEventServices({
    ...core,
    database,
    config: config.events,
    jwtSecret: secrets.jwtSecret,
    authenticator,
  });
  const { eventRecorder } = events;
  const data = createDataServices({
    ...core,
    eventRecorder,
    objectContentLimitBytes: config.objectContentLimitBytes,
    relatedPageBytes: config.relatedPageBytes,
  });
  const billing = createBillingServices({
    ...core,
    config,
    catalog,
    payments: providers.payments,
    users: (userId) => auth.users.findById(userId),
    ...(metrics ? { metrics } : {}),
  });
  // The caller's billing account (tests may replace it with an in-memory one of the same interface).
  const billingAccount = deps.billing ?? billing.account;
  // Pathways named by id are read from the owner's conversational-pathways store.
  const pathways = createPathwayServices({ records: data.records });
  const knowledge = createKnowledgeServices({
    ...core,
    config: config.knowledge,
    embeddings: createEmbeddingsProvider(config),
  });
  const telephony = createTelephonyServices({
    ...core,
    config,
    providers: providers.telephony,
    billing: billingAccount,
    billingEvents: billing.events,
    data,
    knowledge: knowledge.lookup,
    eventRecorder,
  });
  const personas = createPersonaServices({
    voice: providers.voice,
    signedPayloads: data.signedPayloads,
    clock,
    previewLimits: {
      limiter,
      perUser: rateLimits.voicePreviewPerUser,
      charactersPerUser: rateLimits.voicePreviewCharactersPerUser,
      localPerUser: rateLimits.localVoicePreviewPerUser,
    },
  });
  const integrations = createIntegrationServices({ ...core, scheduling: providers.scheduling });
  const connect = createConnectServices({
    ...core,
    data,
    connector: providers.connector,
    billing: billingAccount,
    config: config.connector,
  });
  const webhooks = createWebhookServices({
    ...core,
    config: config.webhooks,
    ...(metrics ? { onAttemptFailed: () => metrics.webhookFailures.inc() } : {}),
  });
  // Custom HTTP tools are signed and filtered as webhooks are; the voice integration invokes them through this.
  const customTools = createCustomToolServices({
    ...core,
    webhooks: webhooks.webhooks,
    allowPrivate: config.webhooks.allowPrivate,
  });
  const voiceAgent =
    deps.voiceAgent ??
    createVoiceAgentProviders(config.voiceAgent, providers.voice, {
      pocketsphinx: () => createPocketsphinxSpeechToText(),
    });
  // Every outbound call asks the account's do-not-call list (the campaigns area keeps it); the agent's opt_out tool adds to it.
  const { doNotCall } = createDoNotCallServices(core);
  // The calls: one store per table, shared by the calls area and the voice agent; the carrier before the calls service it carries calls for.
  const callStores = createCallStores(core.db, core.dialect);
  const carrier = createVoiceCarrier({
    ...core,
    store: callStores.sessions,
    config,
    telephony: providers.telephony,
    serviceTokens: data.serviceTokens,
  });
  // The built-in voice agent carries calls (through Twilio, or the sandbox carrier without it), unless an audio server is configured or given.
  const keepAudio = Boolean(config.audio.url || deps.providers?.audio);
  const audio = carrier.carrier && !keepAudio ? carrier.carrier : providers.audio;
  const callArea = createCallArea({
    ...core,
    stores: callStores,
    publicUrl,
    audio,
    audioSecret,
    data,
    eventRecorder,
    webhooks: webhooks.webhooks,
    billing: billingAccount,
    pricing: callPricing(config, catalog),
    doNotCall,
    telephony: providers.telephony,
    numbers: telephony.numbers,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
    pathways: pathways.pathways,
    customTools: customTools.customTools,
  });
  const { calls, views: callViews } = callArea;
  const voice = createVoiceAgentServices({
    ...core,
    config,
    telephony: providers.telephony,
    carrier,
    calls: calls.calls,
    legs: callArea.transfers,
    designs: callArea.designs,
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
    records: data.records,
    ...(metrics ? { observers: voiceObservers(metrics) } : {}),
    numbers: telephony.numbers,
    routeFor: (numberId) => telephony.inbound.routeFor(numberId),
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
  });
  // After each call is accounted for, its analysis is queued (by the configured model, else the sandbox analyser).
  const analysis = createAnalysisServices({
    ...core,
    defineSqliteAggregate: database.defineSqliteAggregate,
    sessions: callStores.sessions,
    records: data.records,
    chargedCents: (ids) => callViews.chargedCents(ids),
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
    ...core,
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
  });
  // Agent tests run the agent of a web call, with the call's model and tools, free; voice tests speak with the offline caller voice.
  const callerVoice = offlineCallerVoice();
  const agentTests = createAgentTestServices({
    ...core,
    jobs,
    events: eventRecorder,
    clock: 'setTimeout' in clock ? (clock as TimerClock) : systemClock,
    webCalls: voice.webCalls,
    model: voiceAgent.languageModel ?? new SandboxDialogue({ clock }),
    llmDeadlineMs: voiceAgent.llmDeadlineMs,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    // The same integration rows against the sandbox calendar: a test books nothing real.
    sandboxIntegrations: createIntegrationServices({ ...core, scheduling: new SandboxSchedulingProvider() })
      .integrations,
    settings: { maxRunsPerUser: 20, concurrency: 8 },
    analyse: (facts, settings) => analysis.analysis.analysis(facts, settings),
    customTools: customTools.customTools,
    voice: {
      startWebCall: (userId, input) => voice.webCalls.start(userId, input),
      callView: (userId, id) => callViews.get(userId, id),
      get callerVoice() {
        return callerVoice();
      },
    },
  });
  const temporarySessions = createTemporarySessionServices({
    ...core,
    config: config.temporarySessions,
    tokens: data.serviceTokens,
    sms: providers.sms,
    email: providers.email,
    calls: calls.calls,
    sessions: callArea.callSessions.sessions,
    rateLimits,
    masterKey: secrets.masterKey,
    firstName: async (userId) => (await auth.users.findById(userId))?.first_name ?? null,
  });
  const housekeeping = createHousekeeping(
    {
      platform,
      auth,
      billingAccount: billing.account,
      jobs,
      connect,
      calls,
      temporarySessions,
      callMaxSeconds: config.billing.callMaxSeconds,
    },
    clock,
  );

  return {
    config,
    database,
    clock,
    housekeeping,
    ...platform,
    // The audio server calls go to: the voice agent's carrier unless one is configured.
    providers: { ...providers, audio },
    ...auth,
    apiKeys: apiKeys.apiKeys,
    ...events,
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
    callSessions: callArea.callSessions,
    transfers: callArea.transfers,
    callViews,
    analysis,
    campaigns,
    temporarySessions,
    voice,
    inboundCalls: voice.inboundCalls,
    sandboxInbound: voice.sandboxInbound,
    webCalls: voice.webCalls,
    mediaSockets: voice.mediaSockets,
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

/** The caller voice of agent tests' voice mode, made when first asked for. */
function offlineCallerVoice(): () => OfflineCallerVoice | null {
  let voice: OfflineCallerVoice | null | undefined;
  // flite's slt speaks at 16 kHz, as a browser's microphone sends; espeak-ng when flite is not installed.
  return () =>
    (voice ??= OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'slt' }) ?? OfflineCallerVoice.create());
}
