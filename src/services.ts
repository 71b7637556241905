// The composition root: builds the platform and the providers, then each area
// once, in dependency order, through its own create-services.ts, handing each
// the platform's core, the configuration (its deps name their slice) and the
// areas it uses, by name (it picks their services). Nothing is assigned or
// subscribed here after it is built: areas that hear of another's events
// subscribe in their own create-services (telephony to billing's item status,
// analysis and campaigns to a call's end); docs/decisions/architecture.md.
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { createHousekeeping } from './housekeeping.js';
import type { Clock } from './lib/clock.js';
import { generateWebhookSecret } from './lib/standard-webhooks.js';
import { createAgentTestServices } from './modules/agent-tests/create-services.js';
import { createAnalysisServices } from './modules/analysis/create-services.js';
import { createApiKeyServices } from './modules/api-keys/create-services.js';
import { createAuthServices } from './modules/auth/create-services.js';
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
  const { config, database, secrets, clock, metrics, voiceAgent } = deps;
  const platform = createPlatformServices({ database, clock, secrets, log: deps.log ?? silentLog });
  // What every area is built with: the platform's core (database, clock, secret box, limiter, audit, single-use
  // tokens, jobs, log), the configuration, of which each area's deps name their slice (Pick<Config, ...>), and
  // the app's metrics (billing, webhooks and the voice agent count on them).
  const base = { ...platform.core, config, metrics };
  const catalog = loadCatalog(config.billing);
  const audioSecret = config.audio.secret ?? generateWebhookSecret();
  const providers: Providers = {
    ...createProviders(config, platform.outbox, secrets.masterKey, catalog.plans, clock, audioSecret),
    ...deps.providers,
  };
  const apiKeys = createApiKeyServices(base);
  const auth = createAuthServices({ ...base, secrets, apiKeys, providers });
  const events = createEventServices({ ...base, database, secrets, auth });
  const data = createDataServices({ ...base, eventRecorder: events.eventRecorder });
  const billing = createBillingServices({ ...base, catalog, providers, auth });
  // The caller's billing account (tests may replace it with an in-memory one of the same interface).
  const account = deps.billing ?? billing.account;
  // Pathways named by id are read from the owner's conversational-pathways store.
  const pathways = createPathwayServices({ records: data.records });
  const knowledge = createKnowledgeServices(base);
  const telephony = createTelephonyServices({ ...base, providers, account, billing, data, knowledge, events });
  const personas = createPersonaServices({ ...base, providers, data });
  const integrations = createIntegrationServices({ ...base, providers });
  const connect = createConnectServices({ ...base, data, providers, account });
  const webhooks = createWebhookServices(base);
  // Custom HTTP tools are signed and filtered as webhooks are; the voice integration invokes them through this.
  const customTools = createCustomToolServices({ ...base, webhooks: webhooks.webhooks });
  // Every outbound call asks the account's do-not-call list (the campaigns area keeps it); the agent's opt_out tool adds to it.
  const { doNotCall } = createDoNotCallServices(base);
  // What calls refer to and report through (a call's design, its numbers and records, webhooks, the do-not-call list), for every area that makes or reads calls.
  const callRefs = {
    knowledge: knowledge.knowledge,
    integrations: integrations.integrations,
    personas: personas.personas,
    pathways: pathways.pathways,
    customTools: customTools.customTools,
    numbers: telephony.numbers,
    records: data.records,
    webhooks: webhooks.webhooks,
    events,
    doNotCall,
  };
  // The calls: one store per table, shared by the calls area and the voice agent; the carrier before the calls service it carries calls for.
  const stores = createCallStores(base.db, base.dialect);
  const carrier = createVoiceCarrier({ ...base, providers, stores, data });
  // The built-in voice agent carries calls (through Twilio, or the sandbox carrier without it), unless an audio server is configured or given.
  const audio = carrier.carrier && !config.audio.url && !deps.providers?.audio ? carrier.carrier : providers.audio;
  const calls = createCallArea({ ...base, ...callRefs, stores, catalog, providers, audio, audioSecret, data, account });
  const voice = createVoiceAgentServices({ ...base, ...callRefs, carrier, calls, telephony, providers, voiceAgent });
  // After each call is accounted for, its analysis is queued (by the configured model, else the sandbox analyser).
  const analysis = createAnalysisServices({ ...base, ...callRefs, database, calls, voice });
  const campaigns = createCampaignServices({ ...base, ...callRefs, calls, carrier });
  const { sandboxIntegrations } = integrations;
  const agentTests = createAgentTestServices({ ...base, ...callRefs, voice, calls, analysis, sandboxIntegrations });
  const temporarySessions = createTemporarySessionServices({ ...base, secrets, data, providers, calls, auth });
  const housekeeping = createHousekeeping({ platform, auth, billing, connect, calls, temporarySessions, config });

  // Each area by name, as its create-services built it (the providers' audio: the voice agent's carrier unless configured).
  return {
    config,
    database,
    clock,
    providers: { ...providers, audio },
    platform,
    auth,
    apiKeys,
    events,
    data,
    billing,
    pathways,
    knowledge,
    telephony,
    personas,
    integrations,
    connect,
    webhooks,
    customTools,
    calls,
    voice,
    analysis,
    campaigns,
    agentTests,
    temporarySessions,
    housekeeping,
  };
}

export type Services = ReturnType<typeof createServices>;
