// Carries one call's media on this instance (DESIGN.md "Voice agent"): the
// media route hands it a started transport and the session its token opened;
// it claims the session's media (one stream per call), builds the voice
// session from the sealed assembled call, streams transcript lines as
// `call_transcript` events, and reports the end with the record's extras
// (transcript with times and latency, tool calls, the two-channel recording).
import { randomUUID } from 'node:crypto';
import type { TimerClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import { runUrgentWork } from '../../lib/urgent-work.js';
import {
  type AssembledCall,
  type AudioProgress,
  type CallContext,
  type CallOutcome as RecordOutcome,
  FINAL_STATUSES,
  type ProgressReporter,
} from '../../providers/audio/interface.js';
import type { CallSpeech } from '../../providers/call-speech/interface.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import { CallerWords } from '../../providers/speech-to-text/caller-words.js';
import type { SpeechToText } from '../../providers/speech-to-text/interface.js';
import type { DialLeg, SimulatedCaller } from '../../providers/telephony/interface.js';
import { type SealedHeaders, maskHeaders } from '../custom-tools/headers.js';
import type { CustomToolService, HttpTool } from '../custom-tools/service.js';
import type { PathwayDocument } from '../pathways/schemas.js';
import { PathwayWalker } from '../pathways/walker.js';
import { withoutStepsListing } from '../calls/call-design.js';
import type { CallCustomTool } from '../voice/call-agent.js';
import { recordingWav } from '../voice/recording.js';
import type { Voice } from '../voice/reply.js';
import { type CallOutcome, type TranscriptLine, VoiceSession, type VoiceSettings } from '../voice/session.js';
import type { BookingResult, KnowledgeMatch, ToolServices, TransferResult } from '../voice/tools.js';
import type { Transport } from '../voice/transport.js';
import type { VoiceActivityDetector } from '../voice/vad.js';
import type { MediaHeartbeat } from './heartbeat.js';
import type { LiveCalls } from './live-calls.js';
import type { AuthorizedLeg, DialledLegs } from '../calls/transfers.js';
import type { CallStore } from '../calls/store.js';

/** Providers of live calls, picked from configuration (real, local or sandbox). */
export interface VoiceAgentProviders {
  speechToText: SpeechToText;
  model: LanguageModel;
  speech: { elevenlabs: CallSpeech | null; local: CallSpeech };
  /** A detector with its own state, per call. */
  createVad(): Promise<VoiceActivityDetector>;
}

/** What the tools of a call act on, for the call's owner. `signal` aborts a lookup the caller spoke over (tools.ts `onBargeIn`). */
export interface VoiceToolServices {
  searchKnowledge(
    userId: string,
    knowledgeBaseId: string,
    query: string,
    signal?: AbortSignal,
  ): Promise<KnowledgeMatch[]>;
  checkAvailability(
    userId: string,
    integrationIds: string[],
    date: string | undefined,
    signal?: AbortSignal,
  ): Promise<string[]>;
  bookMeeting(
    userId: string,
    integrationIds: string[],
    input: { start: string; name?: string; email?: string },
    signal?: AbortSignal,
  ): Promise<BookingResult>;
  /** Lists `phone` on the owner's do-not-call list (the agent's opt_out tool); absent: the tool is not offered. */
  optOut?(userId: string, phone: string, sessionId: string): Promise<void>;
}

/**
 * The tool services of one call: only those it can use, so its model is
 * offered only their tools (a knowledge base, a calendar, people to transfer
 * to), each passing on the signal a barge-in aborts.
 */
export function callToolServices(
  userId: string,
  context: CallContext,
  tools: VoiceToolServices,
  transferToHuman: NonNullable<ToolServices['transferToHuman']>,
  /** An outbound call's number and session: its caller may opt out (web and inbound calls have no number to list). */
  outbound?: { phone: string; sessionId: string },
): ToolServices {
  const { knowledgeBaseId } = context;
  const integrations = context.integrationIds ?? [];
  return {
    ...(knowledgeBaseId
      ? {
          searchKnowledge: (query: string, signal: AbortSignal) =>
            tools.searchKnowledge(userId, knowledgeBaseId, query, signal),
        }
      : {}),
    ...(integrations.length
      ? {
          checkAvailability: (date: string | undefined, signal: AbortSignal) =>
            tools.checkAvailability(userId, integrations, date, signal),
          bookMeeting: (input: { start: string; name?: string; email?: string }, signal: AbortSignal) =>
            tools.bookMeeting(userId, integrations, input, signal),
        }
      : {}),
    ...(context.humanAgents?.length ? { transferToHuman } : {}),
    ...(outbound && tools.optOut
      ? { optOut: async () => tools.optOut!(userId, outbound.phone, outbound.sessionId) }
      : {}),
  };
}

/** Live-call control of the carrier that placed the call (Twilio REST; the browser: closing the socket). */
export interface CarrierControl {
  hangUp(): Promise<void>;
  /** Dials the authorized leg in place of the agent (`<Dial timeLimit>` with its status callback). */
  transfer(leg: DialLeg): Promise<void>;
}

/** Transfers as billed legs (transfers.ts DialledLegs): authorized when the agent arranges one, released when never dialled. */
export type TransferLegs = Pick<DialledLegs, 'authorizeTransfer' | 'release'>;

export interface VoiceRunnerDeps {
  store: CallStore;
  secretBox: SecretBox;
  live: LiveCalls;
  clock: TimerClock;
  /** This instance's confirmation of the calls it carries (its id marks them). */
  heartbeat: MediaHeartbeat;
  /** Transfers as billed legs; null when calls are not charged. */
  legs: TransferLegs | null;
  /** What the metrics hear. */
  observers?: RunnerObservers;
  providers: VoiceAgentProviders;
  tools: VoiceToolServices;
  report: ProgressReporter;
  setOutcome(sessionId: string, outcome: string, reason: string | null): Promise<void>;
  /** Records a `call_transcript` event for the owner. */
  transcriptEvent(
    userId: string,
    payload: { session_id: string; role: 'agent' | 'caller'; text: string; at: string; interrupted?: boolean },
  ): Promise<void>;
  /** Records a `call_node` event for the owner: one move along the call's pathway. */
  nodeEvent?(userId: string, payload: { session_id: string; node: string; from?: string; at: string }): Promise<void>;
  /** The customer's HTTP tools and the pathway's webhook nodes: signed, filtered, bounded (custom-tools). */
  customTools?: Pick<CustomToolService, 'invoke' | 'callWebhook'>;
  /** Texts `to` from the account's number `ownNumber` (an SMS node), charged as any SMS; throws when it cannot be sent. */
  sendSms?(userId: string, ownNumber: string | null, to: string, text: string): Promise<void>;
  /** Largest object the data plane stores: a longer recording is stored in parts of this size. */
  maxRecordingBytes: number;
  /** CALL_RECORDING: false keeps no recording. */
  record?: boolean;
  /** The sandbox carrier's simulated caller of a call sid (its script: the recogniser's phrases, or its words when none is installed). */
  simulatedCaller?(callSid: string): SimulatedCaller | null;
  settings?: Partial<VoiceSettings>;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

export interface MediaSessionStart {
  sessionId: string;
  userId: string;
  transport: Transport;
  control: CarrierControl;
  /** The carrier's call sid (Twilio media streams). */
  callSid?: string;
}

type CallDirection = 'inbound' | 'outbound' | 'web';

const OUTCOME_STATUS: Record<CallOutcome['outcome'], AudioProgress['status']> = {
  completed: 'completed',
  voicemail: 'completed',
  transferred: 'completed',
  max_duration: 'completed',
  provider_error: 'failed',
  instance_stopped: 'failed',
  pathway_error: 'failed',
  // Shut out for what its far end sent (an invalid message, an audio flood): the reason says which.
  refused: 'failed',
};

/**
 * The record's pathway: for an inline one (no store object to draw it on),
 * its document too, inline tools' header values masked as every answer shows them.
 */
function withInlineDocument(snapshot: object, call: AssembledCall): object {
  if (!call.pathway || call.pathway.id) return snapshot;
  const document = call.pathway.document as { nodes?: Array<Record<string, unknown>> };
  const nodes = (document.nodes ?? []).map((node) =>
    Array.isArray(node.tools)
      ? {
          ...node,
          tools: node.tools.map((tool: unknown) =>
            typeof tool === 'object' && tool !== null && 'headers' in tool
              ? { ...tool, headers: maskHeaders((tool as { headers: SealedHeaders }).headers) }
              : tool,
          ),
        }
      : node,
  );
  return { ...snapshot, document: { ...document, nodes } };
}

/** What the runner tells the metrics (each a no-op when not given). */
export interface RunnerObservers {
  /** Each transcript line's latency per stage, in ms. */
  turnLatency?(latency: Record<string, number | undefined>): void;
  /** How late each agent frame left against its slot, in ms. */
  frameLateness?(ms: number): void;
  /** A per-utterance recogniser's time from the VAD's cut to its final, in ms. */
  recognitionTime?(ms: number): void;
  /** At a call's end, the caller audio dropped for running ahead of real time, in ms. */
  callerAudioDropped?(ms: number): void;
}

export class VoiceRunner {
  /** Transfers dial billed legs; null (calls not charged): phone calls cannot transfer. */
  private readonly legs: TransferLegs | null;
  readonly observe: Required<RunnerObservers>;

  constructor(private readonly deps: VoiceRunnerDeps) {
    this.legs = deps.legs;
    const observers = deps.observers ?? {};
    this.observe = {
      turnLatency: (latency) => observers.turnLatency?.(latency),
      frameLateness: (ms) => observers.frameLateness?.(ms),
      recognitionTime: (ms) => observers.recognitionTime?.(ms),
      callerAudioDropped: (ms) => observers.callerAudioDropped?.(ms),
    };
  }

  /** This process, as it marks the calls it carries. */
  get instanceId(): string {
    return this.deps.heartbeat.instanceId;
  }

  /** Stops the heartbeat (the app is closing). */
  close(): void {
    this.deps.heartbeat.stop();
  }

  /** Runs the call to its end. The transport is closed when this resolves. */
  async run(start: MediaSessionStart): Promise<void> {
    const { store, secretBox, clock, live } = this.deps;
    const { instanceId } = this;
    const { sessionId, userId, transport } = start;
    const session = await store.findSession(sessionId);
    if (!session || session.user_id !== userId || !session.assembled) return transport.close('unknown_session');
    // Ended meanwhile (a web call nobody connected to in time, a call the carrier ended): nothing to carry.
    if ((FINAL_STATUSES as readonly string[]).includes(session.status)) return transport.close('call_ended');
    if (!(await store.claimMedia(sessionId, instanceId, clock.now()))) return transport.close('already_connected');
    const call = JSON.parse(secretBox.openText(session.assembled)) as AssembledCall;
    const startedAt = clock.now();
    await store.markAnswered(sessionId, startedAt);
    await this.deps.report(sessionId, `media_${sessionId}_in_progress`, { status: 'in_progress', at: iso(startedAt) });

    const context = call.context ?? {};
    const voices: Voice[] = [];
    const { speech } = this.deps.providers;
    if (call.voice.provider === 'elevenlabs' && speech.elevenlabs)
      voices.push({ speech: speech.elevenlabs, voice: call.voice });
    voices.push({
      // Bound to this call: the local speech queue keeps room for every call it speaks for.
      speech: speech.local.forCall?.(sessionId) ?? speech.local,
      voice: call.voice.provider === 'local' ? call.voice : { provider: 'local', voiceId: 'en-us' },
    });
    const events: Promise<void>[] = [];
    const direction = (session.direction ?? 'outbound') as CallDirection;
    // The transfer the agent arranged: its person and, on a phone call, the leg authorized for it (held until dialled or released).
    let arranged: { name: string; phone: string; leg: AuthorizedLeg | null } | null = null;
    // The redirect to the leg's <Dial>, once asked for: true when the carrier took it. The stream may stop (the
    // carrier carries the call to the leg) before the redirect's answer comes back: the end waits for it.
    let dialling: Promise<boolean> | null = null;
    // A sandbox call: the recogniser expects the simulated caller's lines; with none installed, its own words stand in.
    const caller = start.callSid ? (this.deps.simulatedCaller?.(start.callSid) ?? null) : null;
    const configuredStt = this.deps.providers.speechToText;
    const stt: SpeechToText = caller && configuredStt.name === 'none' ? new CallerWords(caller) : configuredStt;
    const phrases = caller ? [...caller.lines] : [];
    const minConfidence = stt.minConfidence?.(phrases);
    const humans = context.humanAgents ?? [];
    const transferToHuman = async (humanAgentId: string | undefined): Promise<TransferResult> => {
      const target = humans.find((h) => h.id === humanAgentId) ?? humans[0];
      if (!target) return { ok: false, message: 'nobody to transfer to' };
      // Asked again (the caller spoke over the agent's last words): the leg already authorized stands; one leg per call.
      if (arranged)
        return arranged.phone === target.phone
          ? { ok: true, name: target.name }
          : { ok: false, message: `a transfer to ${arranged.name} is arranged already` };
      // A browser call dials nothing.
      if (direction === 'web') {
        arranged = { name: target.name, phone: target.phone, leg: null };
        return { ok: true, name: target.name };
      }
      if (!this.legs) return { ok: false, message: 'the transfer is not possible on this line' };
      const authorized = await this.legs.authorizeTransfer(userId, sessionId, target.phone);
      if (!authorized.ok) return { ok: false, message: authorized.message };
      arranged = { name: target.name, phone: target.phone, leg: authorized.leg };
      return { ok: true, name: target.name };
    };
    const toolCall = { session_id: sessionId, direction, from: call.from, to: call.to || null };
    // The number the call belongs to (an SMS node texts from it) and the other party's (it is texted).
    const ownNumber = direction === 'inbound' ? call.to : direction === 'outbound' ? call.from : null;
    const otherParty = direction === 'inbound' ? call.from : direction === 'outbound' ? call.to : null;
    const customTools = this.deps.customTools;
    let nodeEvents: Promise<void> = Promise.resolve();
    const walker = call.pathway
      ? new PathwayWalker({
          document: call.pathway.document as unknown as PathwayDocument,
          id: call.pathway.id,
          variables: call.variables ?? {},
          contact: {
            name: call.contact.name,
            ...(otherParty ? { phone: otherParty } : {}),
            fields: call.contactFields ?? {},
          },
          clock,
          callStartMs: startedAt,
        })
      : null;
    const voice = new VoiceSession({
      transport,
      clock,
      ...(walker
        ? {
            pathway: {
              walker,
              effects: {
                webhook: async (effect, variables, signal) => {
                  if (!customTools) return { ok: false, error: 'webhook nodes are not available on this server' };
                  const sent = await customTools.callWebhook(userId, effect, toolCall, variables, { signal });
                  return sent.ok ? { ok: true, result: sent.result } : { ok: false, error: sent.error };
                },
                digits: async () => {},
                sms: async (text) => {
                  if (!this.deps.sendSms) throw new Error('SMS is not available on this server');
                  if (!otherParty) throw new Error('a web call has no number to text');
                  await this.deps.sendSms(userId, ownNumber, otherParty, text);
                },
                move: (move) => {
                  if (!this.deps.nodeEvent) return;
                  const payload = {
                    session_id: sessionId,
                    node: move.node,
                    ...(move.from !== undefined ? { from: move.from } : {}),
                    at: iso(clock.now()),
                  };
                  // One after the other: moves of one step (a chain of nodes) are recorded in the order they were made.
                  const nodeEvent = this.deps.nodeEvent;
                  nodeEvents = nodeEvents.then(() =>
                    nodeEvent(userId, payload).catch((err) =>
                      this.deps.log.warn({ err, sessionId }, 'call_node event not recorded'),
                    ),
                  );
                  events.push(nodeEvents);
                },
                warn: () => {},
              },
            },
          }
        : {}),
      ...(customTools && (call.customTools?.length || walker)
        ? {
            customTools: {
              tools: (call.customTools ?? []) as unknown as CallCustomTool[],
              invoker: {
                invoke: async (tool, args, variables, signal) => {
                  const outcome = await customTools.invoke(
                    userId,
                    tool as unknown as HttpTool,
                    args,
                    toolCall,
                    variables,
                    { signal },
                  );
                  return outcome.ok
                    ? { ok: true, result: outcome.result, assigned: outcome.assigned }
                    : { ok: false, error: outcome.error };
                },
              },
            },
          }
        : {}),
      ...(call.variables ? { variables: call.variables } : {}),
      vad: await this.deps.providers.createVad(),
      stt,
      ...(phrases.length ? { phrases } : {}),
      // A recogniser that says how sure it is (pocketsphinx spotting keywords): its guesses are not acted on.
      ...(minConfidence !== undefined ? { minConfidence } : {}),
      model: this.deps.providers.model,
      voices,
      services: callToolServices(
        userId,
        context,
        this.deps.tools,
        transferToHuman,
        direction === 'outbound' && call.to ? { phone: call.to, sessionId } : undefined,
      ),
      control: {
        hangUp: () => start.control.hangUp(),
        transfer: async () => {
          if (!arranged) return start.control.hangUp();
          const leg = arranged.leg;
          if (!leg) return;
          const redirect = start.control.transfer(leg.dial);
          dialling = redirect.then(
            () => true,
            () => false,
          );
          try {
            await redirect;
          } catch (err) {
            // Nothing was dialled: the leg's hold goes back.
            await this.legs?.release(leg);
            throw err;
          }
        },
      },
      // Walking the pathway, the session gives the model each step: the old list's listing goes.
      systemPrompt: walker ? withoutStepsListing(call.systemPrompt) : call.systemPrompt,
      firstMessage: call.firstMessage,
      settings: {
        ...this.deps.settings,
        ...(call.maxDurationSeconds ? { maxDurationMs: call.maxDurationSeconds * 1000 } : {}),
      },
      onFrameLateness: (ms) => this.observe.frameLateness(ms),
      onRecognitionTime: (ms) => this.observe.recognitionTime(ms),
      onTranscript: (line) => {
        if (line.latency) this.observe.turnLatency(line.latency as unknown as Record<string, number | undefined>);
      },
      // Lines as they are said: an agent sentence when the caller starts hearing it, not once it has played.
      onLiveLine: (line) => {
        const payload = {
          session_id: sessionId,
          role: line.role,
          text: line.text,
          at: iso(clock.now()),
          ...(line.interrupted ? { interrupted: true } : {}),
        };
        events.push(
          this.deps
            .transcriptEvent(userId, payload)
            .catch((err) => this.deps.log.warn({ err, sessionId }, 'call_transcript event not recorded')),
        );
      },
    });
    // An answering machine (Twilio's asynchronous detection): the voicemail message after the beep, or a hang-up.
    const answeredBy = (verdict: string) => {
      if (verdict.startsWith('machine_end')) voice.leaveVoicemail(context.voicemailMessage);
    };
    let reported!: () => void;
    const done = new Promise<void>((resolve) => (reported = resolve));
    live.add(sessionId, { answeredBy, stop: () => voice.end('instance_stopped', 'instance_stopped'), done });
    if (session.answered_by) answeredBy(session.answered_by);
    this.deps.heartbeat.keep();
    try {
      let outcome: CallOutcome;
      try {
        outcome = await voice.start();
      } finally {
        transport.close('call_ended');
      }
      const { droppedAudioMs, droppedMessages } = transport.inflow;
      if (droppedAudioMs > 0) this.observe.callerAudioDropped(droppedAudioMs);
      if (outcome.outcome === 'refused')
        this.deps.log.warn(
          { sessionId, reason: outcome.reason, droppedAudioMs, droppedMessages },
          'call ended: its far end was shut out for what it sent',
        );
      // A leg arranged but never dialled (the call ended first): nothing to charge, its hold goes back.
      const undialled = arranged as { leg: AuthorizedLeg | null } | null;
      if (undialled?.leg && !(dialling ? await dialling : false))
        await this.legs
          ?.release(undialled.leg)
          .catch((err: unknown) => this.deps.log.warn({ err, sessionId }, 'transfer leg not released'));
      await Promise.all(events);
      await this.finish(sessionId, direction, call, outcome);
    } finally {
      // Removed only once reported: a shutdown waits for this call's record before the database closes.
      live.remove(sessionId);
      reported();
    }
  }

  /**
   * The instance is stopping (SIGTERM, app.close): every call it carries ends
   * now, `failed` with outcome `instance_stopped`, and is reported with its
   * transcript, tool calls and recording before this resolves (at most
   * `timeoutMs`), while the database is still open.
   */
  async stopAll(timeoutMs = 10_000): Promise<number> {
    const calls = this.deps.live.all();
    for (const call of calls) call.stop();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled(calls.map((c) => c.done)), late]);
    clearTimeout(timer);
    return calls.length;
  }

  private async finish(
    sessionId: string,
    direction: CallDirection,
    call: AssembledCall,
    outcome: CallOutcome,
  ): Promise<void> {
    const status = OUTCOME_STATUS[outcome.outcome];
    const recordOutcome: RecordOutcome = outcome.outcome;
    const reason = outcome.reason ?? null;
    await this.deps.setOutcome(sessionId, recordOutcome, reason);
    let recordingParts: Buffer[] | undefined;
    if (outcome.recording.caller.length > 0 && this.deps.record !== false) {
      // A recording longer than the largest object is kept whole, in parts (a 30-minute call is about 57 MB).
      const wav = recordingWav(outcome.recording);
      const partBytes = Math.max(1, this.deps.maxRecordingBytes);
      recordingParts = [];
      for (let offset = 0; offset < wav.length; offset += partBytes)
        recordingParts.push(wav.subarray(offset, offset + partBytes));
      // Calls that end together build their files in one run of the loop (SQLite answers synchronously): live calls' due frames first.
      runUrgentWork();
    }
    const fields: Record<string, unknown> = {
      direction,
      // A web call has no numbers.
      ...(call.from ? { from: call.from } : {}),
      ...(call.to ? { to: call.to } : {}),
      outcome: recordOutcome,
      ...(reason ? { reason } : {}),
      transcript: outcome.transcript,
      toolCalls: outcome.toolCalls,
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(outcome.pathway ? { pathway: withInlineDocument(outcome.pathway, call) } : {}),
      ...(outcome.variables ? { variables: outcome.variables } : {}),
      ...(call.warnings?.length || outcome.warnings?.length
        ? { warnings: [...new Set([...(call.warnings ?? []), ...(outcome.warnings ?? [])])] }
        : {}),
      ...(recordingParts ? { recordingParts: recordingParts.length } : {}),
    };
    await this.deps.report(
      sessionId,
      `media_${sessionId}_end_${randomUUID()}`,
      {
        status,
        at: iso(this.deps.clock.now()),
        duration_seconds: Math.max(0, Math.round(outcome.durationMs / 1000)),
        transcript: outcome.transcript.map((l: TranscriptLine) => ({
          role: l.role === 'agent' ? 'agent' : 'contact',
          text: l.text,
        })),
        outcome: recordOutcome,
        ...(reason ? { reason } : {}),
      },
      { fields, ...(recordingParts ? { recordingParts } : {}) },
    );
  }
}
