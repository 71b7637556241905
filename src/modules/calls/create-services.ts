// Builds the calls area's services: createCallArea for the app (around the
// built-in voice agent), createCallServices alone for tests of the calls
// service. Route modules receive these, not the whole composition root.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { WebCallConfig } from '../../config.js';
import type { Clock, TimerClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { RateLimitRule } from '../../rate-limit-config.js';
import type { AudioProvider, ProgressReporter } from '../../providers/audio/interface.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import type { SignedPayloads } from '../data/signed-payloads.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { PersonaService } from '../personas/service.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { WebhookService } from '../webhooks/service.js';
import type { CustomToolService } from '../custom-tools/service.js';
import type { PathwayService } from '../pathways/service.js';
import { CallDesigns } from './call-design.js';
import { CallChargeStore } from './charge-store.js';
import { type CallBilling, type CallDirection, CallCharges } from './charges.js';
import { CallService, type DoNotCallCheck } from './service.js';
import { type CallSessionDeps, CallSessionService } from './session-service.js';
import { CallStore } from './store.js';
import { type InboundCallDeps, InboundCalls } from '../voice-agent/inbound-calls.js';
import { SandboxInboundCalls } from '../voice-agent/sandbox-inbound.js';
import type { MediaTokens } from '../voice-agent/media-tokens.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { DialledLegs } from './transfers.js';
import type { VoiceAgentCarrier } from '../voice-agent/carrier.js';
import type { VoiceRunner } from '../voice-agent/runner.js';
import { WebCalls } from '../voice-agent/web-calls.js';
import { MediaSockets } from '../voice-agent/media-sockets.js';
import type { MediaAdmission } from '../voice-agent/media-admission.js';
import type { CallControl } from '../../providers/telephony/interface.js';

/** The area's stores: the one store of `call_sessions` (and its progress reports) and the one of `call_charges`. */
export function createCallStores(db: Kysely<Database>, dialect: Dialect) {
  return { sessions: new CallStore(db, dialect), charges: new CallChargeStore(db, dialect) };
}

export type CallStores = ReturnType<typeof createCallStores>;

export interface CallServiceDepsIn {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The stores the voice agent shares (createCallStores); built here when absent (tests of the calls service). */
  stores?: CallStores;
  eventRecorder: EventRecorder;
  webhooks: WebhookService;
  audio: AudioProvider;
  data: { records: StoreRecords };
  /** Billing's account; null: calls are not charged (tests of other parts only). */
  billing: CallBilling | null;
  /** What calls cost: voice rates (ten-thousandths of a dollar a minute) and limits. */
  pricing: {
    rate: (country: string, direction: CallDirection) => number | null;
    concurrencyLimit: (planKey: string | null) => number;
    defaultMaxSeconds: number;
  };
  clock: Clock;
  audioSecret: string;
  publicUrl: string;
  /** The account's do-not-call list, asked before every outbound call (the campaigns area keeps it). */
  doNotCall?: DoNotCallCheck;
}

export function createCallServices(deps: CallServiceDepsIn) {
  const stores = deps.stores ?? createCallStores(deps.db, deps.dialect);
  const charges = deps.billing
    ? new CallCharges({
        store: stores.charges,
        billing: deps.billing,
        clock: deps.clock,
        ...deps.pricing,
      })
    : null;
  const calls = new CallService({
    ...deps,
    charges,
    store: stores.sessions,
    events: deps.eventRecorder,
  });
  // The in-process audio server reports through the same handler as the webhook route.
  deps.audio.connect?.((sessionId, body, headers) => calls.handleAudioReport(sessionId, body, headers));
  return { calls, charges };
}

export type CallServices = ReturnType<typeof createCallServices>;

/** POST /api/session/call on top of the calls service and the areas a call references. */
export function createCallSessionServices(deps: CallSessionDeps) {
  return { sessions: new CallSessionService(deps) };
}

export type CallSessionServices = ReturnType<typeof createCallSessionServices>;

/** What the calls area uses of the built-in voice agent (src/modules/voice-agent/create-services.ts). */
export interface CallAreaVoiceAgent {
  /** The carrier that places calls through the voice agent; null when it cannot. */
  carrier: VoiceAgentCarrier | null;
  store: CallStore;
  tokens: MediaTokens;
  singleUse: SingleUseTokens;
  /** The clock calls run on (timers included). */
  clock: TimerClock;
  bindReporter(calls: ProgressReporter): void;
  /** Carries calls on this instance; its transfers dial legs the calls area charges. */
  runner: Pick<VoiceRunner, 'bindLegs' | 'run'>;
  admission: MediaAdmission;
  controlFor(callSid: string): CallControl | null;
}

/** Everything the calls area touches, as the composition root hands it over. */
export interface CallAreaDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  stores: CallStores;
  clock: Clock;
  secretBox: SecretBox;
  publicUrl: string;
  /** Production never mounts the sandbox's POST /api/sandbox/calls/inbound. */
  production: boolean;
  /** The calls area's slice of the configuration. */
  settings: {
    webCalls: WebCallConfig;
    webCallsPerUser: RateLimitRule;
  };
  voice: CallAreaVoiceAgent;
  telephony: TelephonyProviders;
  /** The audio server calls are handed to. */
  audio: AudioProvider;
  /** True when an audio server was configured or given (AUDIO_SERVER_URL, tests): the voice agent's carrier does not replace it. */
  keepAudio: boolean;
  audioSecret: string;
  data: { records: StoreRecords; signedPayloads: SignedPayloads };
  eventRecorder: EventRecorder;
  webhooks: WebhookService;
  billing: CallBilling | null;
  pricing: CallServiceDepsIn['pricing'];
  doNotCall?: DoNotCallCheck;
  numbers: PhoneNumberService;
  /** Telephony's inbound routing of a number. */
  routeFor: InboundCallDeps['route'];
  knowledge: KnowledgeService;
  integrations: IntegrationService;
  personas: PersonaService;
  /** Pathways a call names (inline, or by id from the owner's store). */
  pathways: PathwayService;
  /** Custom HTTP tools a call declares. */
  customTools: CustomToolService;
  limiter: RateLimiter;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

/**
 * The calls area around the built-in voice agent: the calls service (handed
 * to the voice agent's carrier unless an audio server is configured), inbound
 * and browser calls, the sandbox's inbound ringing and POST /api/session/call.
 * `audio` is the audio server calls now go to.
 */
export function createCallArea(deps: CallAreaDeps) {
  const { clock, secretBox, publicUrl, settings, voice } = deps;
  // The built-in voice agent carries calls (through Twilio, or the sandbox carrier without it), unless an external audio server is configured.
  const audio = voice.carrier && !deps.keepAudio ? voice.carrier : deps.audio;
  const calls = createCallServices({
    db: deps.db,
    dialect: deps.dialect,
    stores: deps.stores,
    eventRecorder: deps.eventRecorder,
    webhooks: deps.webhooks,
    audio,
    data: deps.data,
    billing: deps.billing,
    pricing: deps.pricing,
    clock,
    audioSecret: deps.audioSecret,
    publicUrl,
    ...(deps.doNotCall ? { doNotCall: deps.doNotCall } : {}),
  });
  const report: ProgressReporter = (...args) => calls.calls.report(...args);
  voice.bindReporter(report);
  // Transfers dial billed legs (transfers.ts): authorized by the calls' charges, settled by the carrier's signed callback.
  const transfers = calls.charges
    ? new DialledLegs({
        charges: calls.charges,
        providers: deps.telephony,
        publicUrl,
        findSession: (id) => voice.store.findSession(id),
      })
    : null;
  voice.runner.bindLegs(transfers);
  // The pathway, custom tools and variables of every kind of call: one set of rules.
  const designs = new CallDesigns({ pathways: deps.pathways, customTools: deps.customTools });
  const inboundCalls = new InboundCalls({
    providers: deps.telephony,
    publicUrl,
    clock,
    route: deps.routeFor,
    records: deps.data.records,
    personas: deps.personas,
    designs,
    integrations: deps.integrations,
    calls: calls.calls,
    store: voice.store,
    tokens: voice.tokens,
    singleUse: voice.singleUse,
    secretBox,
    report,
  });
  // POST /api/sandbox/calls/inbound: while the sandbox telephony provider can ring numbers, never in production.
  const sandboxControl = deps.telephony.list.find((p) => p.sandbox)?.calls;
  const sandboxInbound =
    sandboxControl?.ring && !deps.production
      ? new SandboxInboundCalls({
          numbers: deps.numbers,
          control: { ring: (request) => sandboxControl.ring!(request) },
          store: voice.store,
          clock,
          publicUrl,
        })
      : null;
  // Calls from a browser: free test calls through the same voice runner (DESIGN.md "Calls from a browser").
  const webCalls = new WebCalls({
    calls: calls.calls,
    store: voice.store,
    tokens: voice.tokens,
    secretBox,
    records: deps.data.records,
    knowledge: deps.knowledge,
    integrations: deps.integrations,
    personas: deps.personas,
    designs,
    limiter: deps.limiter,
    rateLimit: settings.webCallsPerUser,
    settings: settings.webCalls,
    clock: voice.clock,
    publicUrl,
    report,
    log: deps.log,
  });
  const callSessions = createCallSessionServices({
    signedPayloads: deps.data.signedPayloads,
    calls: calls.calls,
    numbers: deps.numbers,
    knowledge: deps.knowledge,
    integrations: deps.integrations,
    personas: deps.personas,
    webhooks: deps.webhooks,
    designs,
    clock,
    ...(transfers ? { dialable: (phone: string) => transfers.dialable(phone) } : {}),
  });
  const mediaSockets = new MediaSockets({
    admission: voice.admission,
    tokens: voice.tokens,
    store: voice.store,
    controlFor: (callSid) => voice.controlFor(callSid),
    runner: voice.runner,
    legs: transfers,
    webConnected: (sessionId) => webCalls.connected(sessionId),
  });
  return { audio, voice, calls, inboundCalls, sandboxInbound, webCalls, callSessions, transfers, mediaSockets };
}
