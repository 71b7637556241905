// Builds the built-in voice agent (DESIGN.md "Voice agent"), in two steps
// around the calls service, in dependency order: createVoiceCarrier first
// (the carrier that places outbound calls through Twilio or the sandbox
// carrier; the calls service hands its calls to it), then, once the calls
// service exists, createVoiceAgentServices: the runner that carries a call's
// audio on this instance, Twilio's callbacks, inbound and browser calls, the
// media sockets and the watch over calls nobody carries.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { type Clock, type TimerClock, systemClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { ProgressReporter } from '../../providers/audio/interface.js';
import { SandboxDialogue } from '../../providers/language-model/sandbox.js';
import { NoRecognition } from '../../providers/speech-to-text/none.js';
import type { CallControl, TelephonyProviders } from '../../providers/telephony/interface.js';
import { createPocketsphinxSpeechToText } from '../../providers/speech-to-text/pocketsphinx.js';
import type { VoiceProviders } from '../../providers/voice/interface.js';
import {
  type VoiceAgentProviders as ConfiguredVoiceProviders,
  createVoiceAgentProviders,
} from '../../providers/voice-agent.js';
import type { CallDesigns } from '../calls/call-design.js';
import type { CallService } from '../calls/service.js';
import type { CallStore } from '../calls/store.js';
import type { DialledLegs } from '../calls/transfers.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { PersonaService } from '../personas/service.js';
import type { Metrics } from '../platform/metrics.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { SmsService } from '../telephony/sms-service.js';
import { type VoiceActivitySource, loadVoiceActivity } from '../voice/silero-vad.js';
import type { VoiceActivityDetector } from '../voice/vad.js';
import { VoiceAgentCarrier } from './carrier.js';
import { MediaHeartbeat } from './heartbeat.js';
import { type InboundCallDeps, InboundCalls } from './inbound-calls.js';
import { LiveCalls } from './live-calls.js';
import { DEFAULT_MEDIA_ADMISSION, MediaAdmission } from './media-admission.js';
import { MediaSockets } from './media-sockets.js';
import { MediaTokens } from './media-tokens.js';
import { OrphanedCalls } from './orphans.js';
import { type RunnerObservers, type VoiceRunnerDeps, VoiceRunner } from './runner.js';
import { SandboxInboundCalls } from './sandbox-inbound.js';
import { createVoiceToolServices } from './tools.js';
import { TwilioCallCallbacks } from './twilio-callbacks.js';
import { WebCalls } from './web-calls.js';

/** Sandbox calls from a user without a number of their own come from Twilio's test number. */
export const SANDBOX_DEFAULT_FROM = '+15005550006';

type Log = { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };

export interface VoiceCarrierDeps {
  /** The calls area's one store of call sessions (the voice agent's side of each too). */
  stores: { sessions: CallStore };
  clock: Clock;
  secretBox: SecretBox;
  /** PUBLIC_URL; TWILIO_FROM (calls without a number of their own come from it); SANDBOX_CALLS (`voice`: the sandbox carrier places calls when Twilio cannot). */
  config: Pick<Config, 'publicUrl' | 'twilio' | 'audio'>;
  providers: { telephony: TelephonyProviders };
  data: { serviceTokens: ServiceTokens };
  singleUse: SingleUseTokens;
  log: Log;
}

/** The carrier and what it shares with the rest of the voice agent (media tokens, the live calls, the heartbeat). */
export function createVoiceCarrier(deps: VoiceCarrierDeps) {
  const store = deps.stores.sessions;
  const { telephony } = deps.providers;
  const twilioFrom = deps.config.twilio?.from ?? null;
  const tokens = new MediaTokens(deps.data.serviceTokens, deps.singleUse);
  const live = new LiveCalls();
  const heartbeat = new MediaHeartbeat({
    instanceId: `instance_${randomUUID()}`,
    store,
    live,
    clock: deps.clock,
    log: deps.log,
  });
  // Twilio places the calls when it can (credentials and TWILIO_FROM); without Twilio the sandbox carrier does, unless SANDBOX_CALLS=timer.
  const twilio = telephony.list.find((p) => !p.sandbox && p.calls !== null) ?? null;
  const sandbox = telephony.list.find((p) => p.sandbox && p.calls !== null) ?? null;
  const carrierDeps = { store, tokens, secretBox: deps.secretBox, publicUrl: deps.config.publicUrl };
  const holder = {
    instanceId: heartbeat.instanceId,
    keepHeartbeat: () => heartbeat.keep(),
    now: () => deps.clock.now(),
  };
  const carrier =
    twilio?.calls && twilioFrom
      ? new VoiceAgentCarrier({ ...carrierDeps, control: twilio.calls, defaultFrom: twilioFrom, sandbox: false })
      : !twilio && sandbox?.calls && deps.config.audio.sandboxCalls === 'voice'
        ? new VoiceAgentCarrier({
            ...carrierDeps,
            control: sandbox.calls,
            defaultFrom: SANDBOX_DEFAULT_FROM,
            sandbox: true,
            holder,
          })
        : null;
  return {
    store,
    tokens,
    live,
    heartbeat,
    /** Once-only claims across instances (an inbound call's CallSid answered once). */
    singleUse: deps.singleUse,
    /** null when the voice agent cannot place calls (then an audio server, or the timer sandbox, carries them). */
    carrier,
    /** The sandbox carrier's control (its simulated callers; ringing our numbers), whoever places outbound calls. */
    sandboxControl: sandbox?.calls ?? null,
    /** Live-call control of the carrier of `callSid`: the sandbox carrier's own calls, else the carrier that places calls. */
    controlFor(callSid: string): CallControl | null {
      if (sandbox?.calls?.caller?.(callSid)) return sandbox.calls;
      return carrier?.control ?? null;
    },
  };
}

export type VoiceCarrierServices = ReturnType<typeof createVoiceCarrier>;

export interface VoiceAgentDeps {
  db: Kysely<Database>;
  clock: Clock;
  secretBox: SecretBox;
  /**
   * PUBLIC_URL; NODE_ENV (production never mounts POST /api/sandbox/calls/inbound);
   * CALL_RECORDING; the voice settings; the media sockets' admission
   * (MEDIA_UNAUTHENTICATED_*); browser calls' limits; the largest object
   * (a longer recording is stored in parts); the voice agent's providers (voiceAgent: STT, LLM, TTS).
   */
  config: Pick<
    Config,
    | 'publicUrl'
    | 'env'
    | 'audio'
    | 'voice'
    | 'voiceAgent'
    | 'mediaSockets'
    | 'webCalls'
    | 'rateLimits'
    | 'objectContentLimitBytes'
  >;
  /** The carriers (Twilio, the sandbox); the voice providers (TTS) the agent's speech is built on. */
  providers: { telephony: TelephonyProviders; voice: VoiceProviders };
  carrier: VoiceCarrierServices;
  /**
   * The calls area: the calls service (calls are recorded and their progress reported there), transfers'
   * billed legs (null when calls are not charged) and the pathway, custom tools and variables of every kind of call.
   */
  calls: {
    calls: Pick<CallService, 'report' | 'openInbound' | 'openWeb' | 'discardWeb'>;
    transfers: DialledLegs | null;
    designs: CallDesigns;
  };
  /** Replaces the providers built from config.voiceAgent (tests). */
  voiceAgent?: ConfiguredVoiceProviders | undefined;
  /** The account's do-not-call list (the campaigns area): the agent's opt_out tool adds to it. */
  doNotCall?: Parameters<typeof createVoiceToolServices>[2];
  /** Custom HTTP tools and pathway webhook nodes (signed and filtered as webhooks are). */
  customTools?: VoiceRunnerDeps['customTools'];
  /**
   * Telephony: a pathway's SMS nodes text from the call's own number through its SMS service (held, charged,
   * rate-limited); its inbound routing of a number.
   */
  telephony: { sms?: Pick<SmsService, 'send'>; inbound: { routeFor: InboundCallDeps['route'] } };
  events: { eventRecorder: EventRecorder };
  records: StoreRecords;
  /** What the metrics hear of the calls carried. */
  metrics?: VoiceMetrics;
  numbers: PhoneNumberService;
  knowledge: KnowledgeService;
  integrations: IntegrationService;
  personas: PersonaService;
  limiter: RateLimiter;
  log: Log;
}

type VoiceMetrics = Pick<
  Metrics,
  'observeVoiceLatency' | 'voiceFrameLateness' | 'voiceRecognition' | 'callerAudioDropped'
>;

/** The voice agent's measurements, in the metrics' units (seconds). */
function voiceObservers(metrics: VoiceMetrics): RunnerObservers {
  return {
    turnLatency: (latency: Record<string, number | undefined>) => metrics.observeVoiceLatency(latency),
    frameLateness: (ms: number) => metrics.voiceFrameLateness.observe(ms / 1000),
    recognitionTime: (ms: number) => metrics.voiceRecognition.observe(ms / 1000),
    callerAudioDropped: (ms: number) => metrics.callerAudioDropped.inc(ms / 1000),
  };
}

/** Silero loads once per process, on the first call (not at start: idle memory); without it, calls use the energy detector. */
function vadFactory(log: Log) {
  let loading: Promise<VoiceActivitySource> | null = null;
  return async (): Promise<VoiceActivityDetector> => {
    loading ??= loadVoiceActivity().then((source) => {
      if (source.kind !== 'silero')
        log.warn(
          { reason: source.fallbackReason },
          'Silero voice activity model did not load; calls use the energy detector',
        );
      return source;
    });
    return (await loading).create();
  };
}

export function createVoiceAgentServices(deps: VoiceAgentDeps) {
  const { carrier, secretBox, config } = deps;
  const { sms } = deps.telephony;
  const { telephony } = deps.providers;
  const { calls, transfers: legs, designs } = deps.calls;
  const events = deps.events.eventRecorder;
  const { publicUrl } = config;
  const providers =
    deps.voiceAgent ??
    createVoiceAgentProviders(config.voiceAgent, deps.providers.voice, {
      pocketsphinx: () => createPocketsphinxSpeechToText(),
    });
  // A pathway's SMS node texts from the call's own number.
  const sendSms: VoiceRunnerDeps['sendSms'] | null = sms
    ? async (userId, ownNumber, to, body) => {
        const number = ownNumber ? (await deps.numbers.list(userId)).find((n) => n.phoneNumber === ownNumber) : null;
        if (!number) throw new Error("the call's number is not one of the account's numbers");
        await sms.send(userId, { phoneNumberId: number.id, to, body });
      }
    : null;
  const { store, tokens, live, heartbeat } = carrier;
  const clock: TimerClock = 'setTimeout' in deps.clock ? (deps.clock as TimerClock) : systemClock;
  const report: ProgressReporter = (...args) => calls.report(...args);
  const setOutcome = (sessionId: string, outcome: string, reason: string | null) =>
    store.setOutcome(sessionId, outcome, reason);
  // One for both media routes: the cap in all counts Twilio's and browsers' sockets together.
  const admission = new MediaAdmission(
    {
      ...DEFAULT_MEDIA_ADMISSION,
      perAddress: config.mediaSockets.unauthenticatedPerAddress,
      total: config.mediaSockets.unauthenticatedTotal,
    },
    clock,
  );
  const recordEvent =
    (type: 'call_transcript' | 'call_node') => async (userId: string, payload: Record<string, unknown>) => {
      await events.record(deps.db, [{ userId, type, payload }]);
      events.announce();
    };
  const runner = new VoiceRunner({
    store,
    secretBox,
    live,
    clock,
    heartbeat,
    legs,
    ...(deps.metrics ? { observers: voiceObservers(deps.metrics) } : {}),
    providers: {
      speechToText: providers.speechToText ?? new NoRecognition(),
      model: providers.languageModel ?? new SandboxDialogue({ clock: deps.clock }),
      speech: providers.callSpeech,
      createVad: vadFactory(deps.log),
    },
    tools: createVoiceToolServices(deps.knowledge, deps.integrations, deps.doNotCall),
    report,
    setOutcome,
    transcriptEvent: recordEvent('call_transcript'),
    nodeEvent: recordEvent('call_node'),
    ...(deps.customTools ? { customTools: deps.customTools } : {}),
    ...(sendSms ? { sendSms } : {}),
    maxRecordingBytes: config.objectContentLimitBytes,
    record: config.audio.recording ?? true,
    // The sandbox carrier's calls (outbound, or rung by POST /api/sandbox/calls/inbound whoever places outbound calls).
    simulatedCaller: (callSid) => carrier.sandboxControl?.caller?.(callSid) ?? null,
    // VOICE_* (its deadline the same VOICE_LLM_DEADLINE_MS the providers were built with).
    settings: config.voice,
    log: deps.log,
  });
  const callbacks = new TwilioCallCallbacks({
    providers: telephony,
    publicUrl,
    store,
    live,
    clock: deps.clock,
    report,
    setOutcome,
  });
  const orphans = new OrphanedCalls({ store, heartbeat, report, clock: deps.clock });
  const inboundCalls = new InboundCalls({
    providers: telephony,
    publicUrl,
    clock: deps.clock,
    route: (numberId) => deps.telephony.inbound.routeFor(numberId),
    records: deps.records,
    personas: deps.personas,
    designs,
    integrations: deps.integrations,
    calls,
    store,
    tokens,
    singleUse: carrier.singleUse,
    secretBox,
    report,
  });
  // POST /api/sandbox/calls/inbound: while the sandbox telephony provider can ring numbers, never in production.
  const ringing = telephony.list.find((p) => p.sandbox)?.calls;
  const sandboxInbound =
    ringing?.ring && config.env !== 'production'
      ? new SandboxInboundCalls({
          numbers: deps.numbers,
          control: { ring: (request) => ringing.ring!(request) },
          store,
          clock: deps.clock,
          publicUrl,
        })
      : null;
  // Calls from a browser: free test calls through the same voice runner (DESIGN.md "Calls from a browser").
  const webCalls = new WebCalls({
    calls,
    store,
    tokens,
    secretBox,
    records: deps.records,
    knowledge: deps.knowledge,
    integrations: deps.integrations,
    personas: deps.personas,
    designs,
    limiter: deps.limiter,
    rateLimit: config.rateLimits.webCallsPerUser,
    settings: config.webCalls,
    clock,
    publicUrl,
    report,
    log: deps.log,
  });
  const mediaSockets = new MediaSockets({
    admission,
    tokens,
    store,
    controlFor: (callSid) => carrier.controlFor(callSid),
    runner,
    legs,
    webConnected: (sessionId) => webCalls.connected(sessionId),
  });
  return {
    store,
    tokens,
    admission,
    live,
    /** The clock calls run on (timers included). */
    clock,
    carrier: carrier.carrier,
    controlFor: carrier.controlFor,
    runner,
    callbacks,
    inboundCalls,
    sandboxInbound,
    webCalls,
    mediaSockets,
    failOrphaned: (options?: { exclusive?: boolean }) => orphans.failOrphaned(options),
    endUnconnected: () => orphans.endUnconnected(),
    watchOrphans: (intervalMs: number, log: Log, options?: { exclusive?: boolean }) =>
      orphans.watch(intervalMs, log, options),
    /** What calls will use and why, in one line (main.ts logs it at start-up). */
    /** The providers calls use (the model is also the analysis' and the agent tests'). */
    providers,
    description: providers.name,
    /** Ends every call this instance carries and waits for their records (before the media sockets and the database close). */
    stopCalls: (timeoutMs?: number) => runner.stopAll(timeoutMs),
    close: async () => {
      runner.close();
      orphans.stop();
      await providers.close();
    },
  };
}

export type VoiceAgentServices = ReturnType<typeof createVoiceAgentServices>;
