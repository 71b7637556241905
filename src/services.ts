// The composition root: builds the providers, then each area in dependency
// order through its own create-services.ts, handing each only what it uses
// (its services' collaborators and its slice of the configuration). Nothing
// is assigned after it is built; areas that hear of another's events
// subscribe when they are built (billing's item status, a call's end).
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { createHousekeeping } from './housekeeping.js';
import type { AuthContext } from './http/auth.js';
import type { Clock } from './lib/clock.js';
import { generateWebhookSecret } from './lib/standard-webhooks.js';
import { createAgentTestServices } from './modules/agent-tests/create-services.js';
import { createAnalysisServices } from './modules/analysis/create-services.js';
import { createApiKeyServices } from './modules/api-keys/create-services.js';
import { createAuthServices } from './modules/auth/create-services.js';
import { CredentialCache } from './modules/auth/credential-cache.js';
import type { BillingAccount } from './modules/billing/account.js';
import { loadCatalog } from './modules/billing/catalog.js';
import { createBillingServices } from './modules/billing/create-services.js';
import { createCallArea, createCallStores } from './modules/calls/create-services.js';
import { createCampaignServices, createDoNotCallServices } from './modules/campaigns/create-services.js';
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
import { createWebhookServices } from './modules/webhooks/create-services.js';
import { type Providers, createProviders } from './providers/index.js';
import type { VoiceAgentProviders } from './providers/voice-agent.js';
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
  const { core } = platform;
  const catalog = loadCatalog(config.billing);
  const audioSecret = config.audio.secret ?? generateWebhookSecret();
  const providers: Providers = {
    ...createProviders(config, platform.outbox, secrets.masterKey, catalog.plans, clock, audioSecret),
    ...deps.providers,
  };
  // Sessions and API keys share one cache of recent credential lookups, so ending either takes effect at once on this instance.
  const credentialCache = new CredentialCache<AuthContext>(clock, config.authCacheMs);
  const apiKeys = createApiKeyServices({ ...core, credentialCache });
  const auth = createAuthServices({
    ...core,
    config,
    secrets,
    credentialCache,
    apiKeys: apiKeys.apiKeys,
    email: providers.email,
    sms: providers.sms,
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
    config,
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
    config,
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
    ...core,
    config,
    voice: providers.voice,
    signedPayloads: data.signedPayloads,
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
    ...(metrics ? { metrics } : {}),
  });
  // Custom HTTP tools are signed and filtered as webhooks are; the voice integration invokes them through this.
  const customTools = createCustomToolServices({
    ...core,
    webhooks: webhooks.webhooks,
    allowPrivate: config.webhooks.allowPrivate,
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
    config,
    catalog,
    audio,
    audioSecret,
    data,
    eventRecorder,
    webhooks: webhooks.webhooks,
    billing: billingAccount,
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
    voice: providers.voice,
    ...(deps.voiceAgent ? { providers: deps.voiceAgent } : {}),
    doNotCall,
    customTools: customTools.customTools,
    sms: telephony.sms,
    events: eventRecorder,
    records: data.records,
    ...(metrics ? { metrics } : {}),
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
    model: voice.providers.languageModel,
    calls: calls.calls,
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
    config,
  });
  const agentTests = createAgentTestServices({
    ...core,
    events: eventRecorder,
    webCalls: voice.webCalls,
    callViews,
    model: voice.providers.languageModel,
    llmDeadlineMs: voice.providers.llmDeadlineMs,
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    sandboxIntegrations: integrations.sandboxIntegrations,
    analysis: analysis.analysis,
    customTools: customTools.customTools,
  });
  const temporarySessions = createTemporarySessionServices({
    ...core,
    config,
    secrets,
    tokens: data.serviceTokens,
    sms: providers.sms,
    email: providers.email,
    calls: calls.calls,
    sessions: callArea.callSessions.sessions,
    users: auth.users,
  });
  const housekeeping = createHousekeeping(
    {
      platform,
      auth,
      billingAccount: billing.account,
      jobs: platform.jobs,
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
