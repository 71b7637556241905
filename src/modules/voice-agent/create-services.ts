// Builds the built-in voice agent's services (DESIGN.md "Voice agent"): the
// carrier that places outbound calls through Twilio, the callbacks Twilio
// sends about them, media-stream tokens, and the runner that carries a call's
// audio on this instance. The carrier is built before the calls service (it
// is that service's audio provider) and bound to it afterwards.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { type Clock, type TimerClock, systemClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { SandboxDialogue } from '../../providers/language-model/sandbox.js';
import { NoRecognition } from '../../providers/speech-to-text/none.js';
import type { CallControl, TelephonyProviders } from '../../providers/telephony/interface.js';
import type { VoiceAgentProviders as ConfiguredVoiceProviders } from '../../providers/voice-agent.js';
import type { StoreRecords } from '../data/store-records.js';
import type { ObjectService } from '../data/objects-service.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import { CallViews } from '../calls/call-views.js';
import type { EventRecorder } from '../events/recorder.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { type VoiceActivitySource, loadVoiceActivity } from '../voice/silero-vad.js';
import type { VoiceActivityDetector } from '../voice/vad.js';
import type { VoiceSettings } from '../voice/session.js';
import { LiveCalls } from './live-calls.js';
import { DEFAULT_MEDIA_ADMISSION, MediaAdmission, type MediaAdmissionLimits } from './media-admission.js';
import { MediaTokens } from './media-tokens.js';
import { MEDIA_STALE_MS, TwilioCallCallbacks } from './twilio-callbacks.js';
import { FINAL_STATUSES, type ProgressReporter } from '../../providers/audio/interface.js';
import { iso } from '../../lib/time.js';
import { VoiceAgentCarrier } from './carrier.js';
import { type VoiceRunnerDeps, type VoiceToolServices, VoiceRunner } from './runner.js';
import type { CallChargeStore } from '../calls/charge-store.js';
import type { CallStore } from '../calls/store.js';

/** Sandbox calls from a user without a number of their own come from Twilio's test number. */
export const SANDBOX_DEFAULT_FROM = '+15005550006';

export interface VoiceServiceDeps {
  db: Kysely<Database>;
  /** The calls area's stores: sessions (the voice agent's side of each) and charges (what the call list shows). */
  stores: { sessions: CallStore; charges: CallChargeStore };
  clock: Clock;
  secretBox: SecretBox;
  publicUrl: string;
  telephony: TelephonyProviders;
  /** TWILIO_FROM: outbound calls without a number of their own come from it. */
  twilioFrom: string | null;
  /** SANDBOX_CALLS: `voice` lets the sandbox carrier place calls when Twilio cannot. */
  sandboxCalls?: 'voice' | 'timer';
  /** CALL_RECORDING (default true). */
  recording?: boolean;
  serviceTokens: ServiceTokens;
  singleUse: SingleUseTokens;
  providers: ConfiguredVoiceProviders;
  tools: VoiceToolServices;
  /** Custom HTTP tools and pathway webhook nodes (signed and filtered as webhooks are). */
  customTools?: VoiceRunnerDeps['customTools'];
  /** A pathway's SMS nodes: texts from the account's number, charged as any SMS. */
  sendSms?: VoiceRunnerDeps['sendSms'];
  events: EventRecorder;
  maxRecordingBytes: number;
  /** The data area: call records are opened with the store's key; a record's children hold its recording. */
  data: { records: StoreRecords; objects: ObjectService };
  settings?: Partial<VoiceSettings>;
  /** Sockets of the media routes before their token is accepted (MEDIA_UNAUTHENTICATED_*). */
  mediaAdmission?: Partial<MediaAdmissionLimits>;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

/** A session whose media stream has not connected this long after its token expired is ended. */
export const MEDIA_CONNECT_GRACE_MS = 10_000;

/** What an orphaned call is charged for: the carrier's duration when it told us, else answered → last heartbeat. */
function orphanSeconds(session: {
  answered_at?: number | null;
  media_heartbeat_at?: number | null;
  carrier_duration_seconds?: number | null;
}): number {
  if (session.carrier_duration_seconds !== null && session.carrier_duration_seconds !== undefined)
    return Number(session.carrier_duration_seconds);
  if (!session.answered_at || !session.media_heartbeat_at) return 0;
  return Math.max(0, Math.round((Number(session.media_heartbeat_at) - Number(session.answered_at)) / 1000));
}

/** Silero loads once per process, on the first call (not at start: idle memory); without it, calls use the energy detector. */
function vadFactory(log: VoiceServiceDeps['log']) {
  let loading: Promise<VoiceActivitySource> | null = null;
  return {
    create: async (): Promise<VoiceActivityDetector> => {
      loading ??= loadVoiceActivity().then((source) => {
        if (source.kind !== 'silero')
          log.warn(
            { reason: source.fallbackReason },
            'Silero voice activity model did not load; calls use the energy detector',
          );
        return source;
      });
      return (await loading).create();
    },
  };
}

export function createVoiceServices(deps: VoiceServiceDeps) {
  const store = deps.stores.sessions;
  const tokens = new MediaTokens(deps.serviceTokens, deps.singleUse);
  const live = new LiveCalls();
  // Twilio places the calls when it can (credentials and TWILIO_FROM); without Twilio the sandbox carrier does, unless SANDBOX_CALLS=timer.
  const twilio = deps.telephony.list.find((p) => !p.sandbox && p.calls !== null) ?? null;
  const sandbox = deps.telephony.list.find((p) => p.sandbox && p.calls !== null) ?? null;
  const instanceId = `instance_${randomUUID()}`;
  // The runner is built below; the sandbox carrier only needs it once a call is placed.
  let runnerRef: VoiceRunner | null = null;
  const holder = { instanceId, keepHeartbeat: () => runnerRef?.keepHeartbeat(), now: () => deps.clock.now() };
  const carrierDeps = { store, tokens, secretBox: deps.secretBox, publicUrl: deps.publicUrl };
  const carrier =
    twilio?.calls && deps.twilioFrom
      ? new VoiceAgentCarrier({ ...carrierDeps, control: twilio.calls, defaultFrom: deps.twilioFrom, sandbox: false })
      : !twilio && sandbox?.calls && deps.sandboxCalls === 'voice'
        ? new VoiceAgentCarrier({
            ...carrierDeps,
            control: sandbox.calls,
            defaultFrom: SANDBOX_DEFAULT_FROM,
            sandbox: true,
            holder,
          })
        : null;
  const clock: TimerClock = 'setTimeout' in deps.clock ? (deps.clock as TimerClock) : systemClock;
  const vad = vadFactory(deps.log);
  // One for both media routes: the cap in all counts Twilio's and browsers' sockets together.
  const admission = new MediaAdmission({ ...DEFAULT_MEDIA_ADMISSION, ...deps.mediaAdmission }, clock);
  // Reports go to the calls service, which is built after these (it takes the carrier as its audio provider).
  let reporter: ProgressReporter | null = null;
  const report = () => {
    if (!reporter) throw new Error('the voice agent is not bound to the calls service');
    return reporter;
  };
  const setOutcome = (sessionId: string, outcome: string, reason: string | null) =>
    store.setOutcome(sessionId, outcome, reason);
  const runner = new VoiceRunner({
    store,
    secretBox: deps.secretBox,
    live,
    clock,
    instanceId,
    providers: {
      speechToText: deps.providers.speechToText ?? new NoRecognition(),
      model: deps.providers.languageModel ?? new SandboxDialogue({ clock: deps.clock }),
      speech: deps.providers.callSpeech,
      createVad: vad.create,
    },
    tools: deps.tools,
    report: (...args) => report()(...args),
    setOutcome,
    transcriptEvent: async (userId, payload) => {
      await deps.events.record(deps.db, [{ userId, type: 'call_transcript', payload }]);
      deps.events.announce();
    },
    nodeEvent: async (userId, payload) => {
      await deps.events.record(deps.db, [{ userId, type: 'call_node', payload }]);
      deps.events.announce();
    },
    ...(deps.customTools ? { customTools: deps.customTools } : {}),
    ...(deps.sendSms ? { sendSms: deps.sendSms } : {}),
    maxRecordingBytes: deps.maxRecordingBytes,
    record: deps.recording ?? true,
    // The sandbox carrier's calls (outbound, or rung by POST /api/sandbox/calls/inbound whoever places outbound calls).
    simulatedCaller: (callSid) => sandbox?.calls?.caller?.(callSid) ?? null,
    settings: { llmDeadlineMs: deps.providers.llmDeadlineMs, ...deps.settings },
    log: deps.log,
  });
  runnerRef = runner;
  const callbacks = new TwilioCallCallbacks({
    providers: deps.telephony,
    publicUrl: deps.publicUrl,
    store,
    live,
    clock: deps.clock,
    report: (...args) => report()(...args),
    setOutcome,
  });
  const views = new CallViews(
    store,
    deps.stores.charges,
    deps.data.records,
    async (userId, objectId, limit = Infinity) => {
      const children: Array<{ id: string }> = [];
      for (let after: string | undefined; ; ) {
        const page = await deps.data.objects.listRelated(userId, objectId, {
          limit: Math.min(limit - children.length, 100),
          ...(after ? { after } : {}),
        });
        children.push(...page.items.map((item) => ({ id: item.id })));
        if (!page.next || children.length >= limit) return children;
        after = page.next;
      }
    },
  );
  /**
   * Ends as `failed` (outcome `instance_stopped`) the calls whose media
   * instance has stopped confirming them: at start and every 30 s on every
   * instance, so within a minute. The report id is fixed per session, so two
   * instances doing this at once end it once. The call is charged what the
   * carrier said it lasted when its `completed` came while the stream still
   * looked carried, else up to the instance's last heartbeat.
   */
  const failOrphaned = async (options: { exclusive?: boolean } = {}): Promise<number> => {
    const now = deps.clock.now();
    // Exclusive (a SQLite server at start: it holds the data folder's lock): every other instance has stopped, however fresh its heartbeat.
    const orphans = await store.listOrphaned(
      FINAL_STATUSES,
      now - MEDIA_STALE_MS,
      100,
      options.exclusive ? instanceId : undefined,
    );
    for (const session of orphans) {
      await setOutcome(session.id, 'instance_stopped', 'instance_stopped');
      await report()(session.id, `orphaned_${session.id}`, {
        status: 'failed',
        at: iso(now),
        outcome: 'instance_stopped',
        reason: 'instance_stopped',
        duration_seconds: orphanSeconds(session),
      });
    }
    return orphans.length;
  };
  /**
   * Ends the sessions whose media stream never connected although its token
   * expired (a carrier that never opened it, a duplicate webhook's session,
   * a browser that never came): their hold goes back and the concurrency
   * slot is free again, within a minute of the deadline.
   */
  const endUnconnected = async (): Promise<number> => {
    const now = deps.clock.now();
    const waiting = await store.listUnconnected(FINAL_STATUSES, now - MEDIA_CONNECT_GRACE_MS, 100);
    for (const session of waiting) {
      // A web call: the same end (and report id) as its own timer's, so the two end it once.
      const web = session.direction === 'web';
      const outcome = web ? 'no_answer' : 'provider_error';
      const reason = web ? 'not_connected' : 'media_not_connected';
      await setOutcome(session.id, outcome, reason);
      await report()(session.id, web ? `web_${session.id}_not_connected` : `unconnected_${session.id}`, {
        status: web ? 'canceled' : 'failed',
        at: iso(now),
        outcome,
        reason,
      });
    }
    return waiting.length;
  };
  let orphanTimer: NodeJS.Timeout | null = null;
  return {
    store,
    views,
    failOrphaned,
    /** Where reports go (CallService.report), once the calls service exists. */
    bindReporter(calls: ProgressReporter) {
      reporter = calls;
    },
    endUnconnected,
    /**
     * Looks for calls of stopped instances, and sessions whose stream never
     * came, now and every `intervalMs`. `exclusive`: no other instance can be
     * running (SQLite), so at start every call of another is ended at once.
     */
    watchOrphans(intervalMs: number, log: VoiceServiceDeps['log'], options: { exclusive?: boolean } = {}) {
      const run = (first = false) => {
        void failOrphaned({ exclusive: first && options.exclusive })
          .then(() => endUnconnected())
          .catch((err: unknown) =>
            log.warn({ err }, 'ending calls of stopped instances, or whose media never connected, failed'),
          );
      };
      runner.keepHeartbeat();
      run(true);
      orphanTimer = setInterval(run, intervalMs);
      orphanTimer.unref();
    },
    tokens,
    admission,
    /** What calls will use and why, in one line (main.ts logs it at start-up). */
    description: deps.providers.name,
    /** Once-only claims across instances (an inbound call's CallSid answered once). */
    singleUse: deps.singleUse,
    live,
    /** The clock calls run on (timers included). */
    clock,
    carrier,
    /** Live-call control of the carrier of `callSid`: the sandbox carrier's own calls, else the carrier that places calls. */
    controlFor(callSid: string): CallControl | null {
      if (sandbox?.calls?.caller?.(callSid)) return sandbox.calls;
      return carrier?.control ?? null;
    },
    runner,
    callbacks,
    /** Ends every call this instance carries and waits for their records (before the media sockets and the database close). */
    stopCalls: (timeoutMs?: number) => runner.stopAll(timeoutMs),
    close: async () => {
      runner.close();
      if (orphanTimer) clearInterval(orphanTimer);
      await deps.providers.close();
    },
  };
}

export type VoiceServices = ReturnType<typeof createVoiceServices>;
