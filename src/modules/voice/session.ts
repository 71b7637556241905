// One live call: wires a transport, voice activity, a recognition stream,
// turn-taking, replies, the history, the tools and the recording, and owns
// their lifetime. It decides nothing itself: turn-taking decides, a reply
// speaks, the heard-text rule says what goes into the history.
//
// API for the wiring (routes, Twilio, records): construct with a started
// transport and the providers, call start(), await the CallOutcome; end()
// stops it from outside (the carrier said completed, the instance stops).
import { resample } from '../../lib/audio.js';
import { dtmfTones } from '../../lib/dtmf.js';
import { sleep, type Timer, type TimerClock } from '../../lib/clock.js';
import { ProviderFailure } from '../../providers/failure.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import type { RecognitionResult, RecognitionStream, SpeechToText } from '../../providers/speech-to-text/interface.js';
import type { PathwayWalker } from '../pathways/walker.js';
import {
  CallAgent,
  type CallCustomTool,
  type CustomToolInvoker,
  type PathwayEffects,
  keypadText,
} from './call-agent.js';
import { heardText } from './heard-text.js';
import { type AgentTurn, History } from './history.js';
import { AgentLiveLines, type LiveLine } from './live-lines.js';
import { ModelPrefetch } from './model-prefetch.js';
import { CallRecording, type RecordingChannels } from './recording.js';
import { RecentFrames } from './recent-frames.js';
import {
  DEFAULT_APOLOGY,
  emptyFacts,
  type LateToolCall,
  modelRequest,
  runReply,
  type Latency,
  type ReplyFacts,
  type Voice,
} from './reply.js';
import { AudioSink, FRAME_MS, type SinkOptions } from './sink.js';
import { offeredTools, ToolRegistry, type ToolCallRecord, type ToolServices, type TransferResult } from './tools.js';
import { MEDIA_VIOLATIONS, type Transport } from './transport.js';
import { DEFAULT_TURN_SETTINGS, TurnTaking, type TurnDecision, type TurnSettings } from './turns.js';
import { SpeechGate, type VoiceActivityDetector } from './vad.js';

export interface TranscriptLine {
  role: 'agent' | 'caller';
  text: string;
  /** ms since the call started. */
  startMs: number;
  endMs: number;
  interrupted?: boolean;
  recognised?: boolean;
  latency?: Latency;
  /** The pathway node current when the line was said (calls that walk a pathway). */
  node?: string;
  /** A caller line that is keypad input (DTMF): `text` is the digit. */
  keypad?: boolean;
}

/** `refused`: the far end was shut out for what it sent (transport.ts MEDIA_VIOLATIONS: an invalid message, an audio flood). */
export type CallOutcomeKind =
  | 'completed'
  | 'transferred'
  | 'max_duration'
  | 'provider_error'
  | 'voicemail'
  | 'instance_stopped'
  | 'refused'
  | 'pathway_error';

export interface CallOutcome {
  outcome: CallOutcomeKind;
  /** agent_ended, silence, caller_hung_up, stream_stopped, socket_closed, ended_by_server, audio_flood, invalid_message, … */
  reason?: string;
  transcript: TranscriptLine[];
  toolCalls: ToolCallRecord[];
  durationMs: number;
  /** PCM16 8 kHz, same length: caller and agent channels. */
  recording: RecordingChannels;
  error?: { provider: string; message: string };
  /** The pathway walked (the record's `pathway`: path and variables). */
  pathway?: ReturnType<CallAgent['snapshot']> & object;
  /** The walk's warnings (a `{{name}}` filled with nothing, a webhook that failed, an SMS not sent). */
  warnings?: string[];
  /** The call's variables at its end (payload, contact, collected, assigned). */
  variables?: Record<string, unknown>;
}

export interface VoiceSettings extends TurnSettings {
  llmDeadlineMs: number;
  /** Ask a real model as soon as the caller's words are final (model-prefetch.ts; VOICE_ASK_MODEL_AHEAD). */
  askModelAhead: boolean;
  /** Caller audio kept for replay into a reopened recognition stream. */
  sttReplayMs: number;
  /** Reopen attempts for a recognition stream that keeps failing without a result in between. */
  sttReopenAttempts: number;
  /** Replies in a row whose model failed twice before the call ends provider_error. */
  maxModelFailures: number;
  tickMs: number;
  sink: SinkOptions;
  repromptText: string;
  apology: string;
}

export const DEFAULT_VOICE_SETTINGS: VoiceSettings = {
  ...DEFAULT_TURN_SETTINGS,
  llmDeadlineMs: 4000,
  askModelAhead: true,
  sttReplayMs: 5000,
  sttReopenAttempts: 3,
  maxModelFailures: 3,
  tickMs: 50,
  sink: {},
  repromptText: 'Are you still there?',
  apology: DEFAULT_APOLOGY,
};

/** Call control: belongs to the telephony provider, never to the media stream. */
export interface CallControl {
  /** Hangs the call up (REST update, <Hangup/>, or closing the stream for the browser). */
  hangUp(): Promise<void> | void;
  /** Sends the call to the human agent transferToHuman arranged. */
  transfer?(target: TransferResult): Promise<void> | void;
}

export interface VoiceSessionOptions {
  transport: Transport;
  clock: TimerClock;
  vad: VoiceActivityDetector;
  stt: SpeechToText;
  model: LanguageModel;
  /** The agent's voice first, then the local voice it falls back to. */
  voices: Voice[];
  /** Knowledge, scheduling and transfer services for the tools (endCall is the session's): the model is offered a tool only when its service is here. */
  services: ToolServices;
  control: CallControl;
  systemPrompt: string;
  firstMessage?: string;
  /** Phrases the recogniser may expect (sandbox scripts). */
  phrases?: string[];
  settings?: Partial<VoiceSettings>;
  /**
   * A recognised final below this confidence is not acted on: the caller's
   * line keeps its words marked "(unclear)" and the model is given
   * "(unclear)" (turns.ts). Unset: confidence is not used.
   */
  minConfidence?: number;
  /** Each line of the record (the call's transcript) once it is known: a caller line at the end of its turn, an agent line once its reply has played or been cut (its heard text). */
  onTranscript?(line: TranscriptLine): void;
  /** Each line as it is said (call_transcript): an agent sentence when its first frame goes out, the heard part of one cut by barge-in, a caller line at the end of its turn. */
  onLiveLine?(line: LiveLine): void;
  onToolCall?(call: ToolCallRecord): void;
  /** How late each agent frame left against its 20 ms slot (ms), for pacing metrics. */
  onFrameLateness?(ms: number): void;
  /** A per-utterance recogniser's own time: from the VAD's cut (endUtterance) to that utterance's final result (ms). */
  onRecognitionTime?(ms: number): void;
  /** The pathway the call walks (a walker made for this call) and what its nodes do outside the conversation. */
  pathway?: { walker: PathwayWalker; effects: Pick<PathwayEffects, 'webhook' | 'digits' | 'sms' | 'move' | 'warn'> };
  /** The customer's HTTP tools of the call, and how they are used. */
  customTools?: { tools: CallCustomTool[]; invoker: CustomToolInvoker };
  /** The call's variables, for its custom tools when it walks no pathway. */
  variables?: Record<string, unknown>;
}

type ReplyKind = 'greeting' | 'answer' | 'reprompt' | 'resume' | 'voicemail';

/** Caller frames that may wait for an asynchronous voice activity detector (1 s); later ones are not detected. */
export const MAX_VAD_WAITING = 50;

/** How long the end of a call waits for tool calls that act (a booking) still running, so its record has their results. */
export const LATE_TOOL_CALL_WAIT_MS = 10_000;

/** How a call ends when its far end stops: `refused` when it was shut out for what it sent, else `completed`. */
function stopOutcome(reason: string): CallOutcomeKind {
  return MEDIA_VIOLATIONS.has(reason) ? 'refused' : 'completed';
}

export class VoiceSession {
  readonly settings: VoiceSettings;
  private readonly clock: TimerClock;
  private readonly transport: Transport;
  private readonly sink: AudioSink;
  private readonly recording: CallRecording;
  private readonly turns: TurnTaking;
  private readonly gate = new SpeechGate();
  private readonly history: History;
  private readonly tools: ToolRegistry;
  /** The turn logic: the pathway walk and every tool the model is offered. */
  private readonly agent: CallAgent;
  /** Aborted when the call ends: a webhook node or a custom tool called outside a reply. */
  private readonly callController = new AbortController();
  /** Why the pathway walk failed: the call ends `pathway_error` once its last line has played. */
  private walkFailed: string | null = null;
  private readonly liveLines: AgentLiveLines;
  /** Tool calls that act, sent before a barge-in and not settled yet. */
  private readonly lateToolCalls = new Set<Promise<void>>();
  private startMs = 0;
  private transcript: TranscriptLine[] = [];
  private toolCalls: ToolCallRecord[] = [];
  private tickTimer: Timer | null = null;
  private vadChain: Promise<void> | null = null;
  /** Caller frames waiting for their speech probability (an asynchronous detector answers one at a time). */
  private vadWaiting = 0;
  /** Frames not given to the detector because MAX_VAD_WAITING were waiting already. */
  vadSkipped = 0;
  private ended = false;
  private voicemail = false;
  /** How the call ends once the carrier has done what the agent asked (hang-up, transfer): its stream may stop before the carrier answers. */
  private endingAs: { outcome: CallOutcomeKind; reason: string } | null = null;
  private started = false;
  private resolveOutcome!: (outcome: CallOutcome) => void;
  readonly outcome: Promise<CallOutcome>;

  // Replies.
  private agentWork: Promise<void> = Promise.resolve();
  private current: { id: number; controller: AbortController } | null = null;
  /** The model asked ahead for the turn the caller is likely done with (model-prefetch.ts). */
  private prefetch: ModelPrefetch | null = null;
  /** Replies asked for and not yet settled (a cut one puts its heard part into the history when it does). */
  private repliesInFlight = 0;
  private replySeq = 0;
  private cancelGeneration = 0;
  private voiceIndex = 0;
  private modelFailuresInRow = 0;
  private unheardAfterCut = '';
  private pendingAction: { kind: 'hang_up' } | { kind: 'transfer'; target: TransferResult } | null = null;
  private readonly walkWarnings: string[] = [];
  /** A step's lines planned by a turn the caller spoke over (a webhook was running): said before the next answer. */
  private unsaidLines: string[] = [];

  // Recognition.
  private stream: RecognitionStream | null = null;
  private sttController = new AbortController();
  private readonly replay: RecentFrames;
  private framesIn = 0;
  /** framesIn when the current stream got its first frame. */
  private streamStartFrame = 0;
  /** Frames up to here are recognised (end of the last final result). */
  private recognisedUpToFrame = 0;
  /**
   * The VAD's utterances in frame numbers (`cutAt`: framesIn when it was cut),
   * as far back as the replay buffer: a reopened per-utterance stream gets each
   * opened and cut again where it was, not the whole replay as one.
   */
  private utterances: Array<{ startFrame: number; endFrame: number | null; cutAt: number | null }> = [];
  /** Clock times of the cuts whose final has not come (per-utterance recognisers answer each cut once, in order). */
  private cutsAwaitingFinal: number[] = [];
  private sttFailuresInRow = 0;
  private lastRecognised: boolean | undefined;
  /** What the recogniser hears: the browser's 16 kHz when both sides can, else the pipeline's 8 kHz. */
  private readonly sttRate: 8000 | 16000;

  constructor(private readonly options: VoiceSessionOptions) {
    this.settings = { ...DEFAULT_VOICE_SETTINGS, ...options.settings, sink: { ...options.settings?.sink } };
    this.replay = new RecentFrames(Math.ceil(this.settings.sttReplayMs / FRAME_MS));
    this.clock = options.clock;
    this.transport = options.transport;
    this.startMs = this.clock.now();
    this.recording = new CallRecording(this.startMs, Math.ceil(this.settings.maxDurationMs / 1000) + 60);
    this.sink = new AudioSink(this.transport, this.clock, {
      ...this.settings.sink,
      recording: this.recording,
      onFrameLateness: options.onFrameLateness,
    });
    this.turns = new TurnTaking(this.startMs, { ...this.settings, finalPerUtterance: !options.stt.streaming });
    this.sttRate = options.stt.wideband && this.transport.callerSampleRate === 16_000 ? 16_000 : 8000;
    this.history = new History(options.systemPrompt);
    const services = options.services;
    const context = {
      searchKnowledge: (q: string, s: AbortSignal) => services.searchKnowledge!(q, s),
      checkAvailability: (d: string | undefined, s: AbortSignal) => services.checkAvailability!(d, s),
      bookMeeting: (i: { start: string; name?: string; email?: string }, s: AbortSignal) => services.bookMeeting!(i, s),
      transferToHuman: async (id: string | undefined, s: AbortSignal) => {
        const generation = this.cancelGeneration;
        const result = await services.transferToHuman!(id, s);
        // Arranged after the caller spoke over the agent: the caller never heard it announced, so it is not carried out.
        if (result.ok && generation === this.cancelGeneration)
          this.pendingAction = { kind: 'transfer', target: result };
        return result;
      },
      optOut: (s: AbortSignal) => services.optOut!(s),
      endCall: () => {
        this.pendingAction ??= { kind: 'hang_up' };
      },
    };
    // A service missing here has its tool left out (offeredTools): the registry never calls it.
    this.tools = new ToolRegistry(context, offeredTools(services));
    const pathway = options.pathway;
    this.agent = new CallAgent({
      systemPrompt: options.systemPrompt,
      walker: pathway?.walker ?? null,
      builtins: this.tools,
      ...(options.customTools ? { customTools: options.customTools.tools, invoker: options.customTools.invoker } : {}),
      sandbox: options.model.sandbox,
      clock: this.clock,
      callStartMs: this.startMs,
      signal: this.callController.signal,
      ...(options.variables ? { variables: options.variables } : {}),
      onToolCall: (call) => this.recordToolCall(call),
      effects: {
        webhook: (effect, variables, signal) =>
          pathway ? pathway.effects.webhook(effect, variables, signal) : Promise.resolve({ ok: false, error: 'none' }),
        digits: async (send) => {
          await this.playDigits(send);
          await pathway?.effects.digits(send);
        },
        sms: async (text) => pathway?.effects.sms(text),
        move: (move) => pathway?.effects.move(move),
        warn: (message) => {
          this.walkWarnings.push(message);
          pathway?.effects.warn(message);
        },
        transfer: (id) =>
          services.transferToHuman
            ? context.transferToHuman(id, this.callController.signal)
            : Promise.resolve({ ok: false, message: 'nobody to transfer to on this call' }),
        end: () => context.endCall(),
        failed: (message) => {
          this.walkFailed = message;
        },
      },
    });
    this.liveLines = new AgentLiveLines(
      (line) => this.options.onLiveLine?.(line),
      (notice) => this.transport.notify(notice),
    );
    this.outcome = new Promise((resolve) => (this.resolveOutcome = resolve));
  }

  /** ms since the call started. */
  private at(clockMs = this.clock.now()) {
    return clockMs - this.startMs;
  }

  /** Starts listening and speaks the first message. Resolves the outcome when the call ends. */
  start(): Promise<CallOutcome> {
    if (this.started) return this.outcome;
    this.started = true;
    this.transport.on('audio', (frame, native) => this.onCallerFrame(frame, native));
    this.transport.on('stop', (reason) =>
      this.endingAs && !MEDIA_VIOLATIONS.has(reason)
        ? this.finish(this.endingAs.outcome, this.endingAs.reason)
        : this.finish(stopOutcome(reason), reason),
    );
    // The far end may have gone while the call was being set up (its stop came before this listener).
    if (this.transport.stopReason !== null) {
      this.finish(stopOutcome(this.transport.stopReason), this.transport.stopReason);
      return this.outcome;
    }
    this.transport.on('dtmf', (digit) => this.onKeypad(digit));
    this.openRecognition();
    this.scheduleTick();
    if (!this.options.pathway) {
      if (this.options.firstMessage) this.reply('greeting', { text: this.options.firstMessage });
      return this.outcome;
    }
    // The pathway's start: its lines (the start node's `say`) are the greeting, else the agent's first message.
    this.agentWork = this.agentWork
      .then(async () => {
        const lines = await this.agent.start(this.callController.signal);
        const greeting = lines.length ? lines.join(' ') : this.options.firstMessage;
        if (greeting) this.reply('greeting', { text: greeting });
        else if (this.walkFailed || this.pendingAction) await this.afterSilentStep();
      })
      .catch((error) => this.fail(error));
    return this.outcome;
  }

  /**
   * An answering machine took the call (asynchronous AMD said the greeting
   * ended): whatever the agent was saying stops, `message` is spoken once (no
   * message: nothing), and the call hangs up once it has played; outcome
   * `voicemail`. Turn-taking stops listening to the machine.
   */
  leaveVoicemail(message?: string) {
    if (this.ended || this.voicemail) return;
    this.voicemail = true;
    this.tickTimer?.cancel();
    this.interrupt();
    if (!message) {
      void this.hangUpAndFinish('voicemail', 'voicemail');
      return;
    }
    this.reply('voicemail', { text: message });
  }

  /** Ends the call from outside (the carrier reported it over; the instance stops: outcome `instance_stopped`). */
  end(reason = 'ended_by_server', outcome: CallOutcomeKind = 'completed') {
    this.finish(outcome, reason);
  }

  /** A key the caller pressed: a caller turn of its own (a pathway edge may take `keywords: ["1"]`). */
  private onKeypad(digit: string) {
    if (this.ended || this.voicemail) return;
    const line: TranscriptLine = { role: 'caller', text: digit, startMs: this.at(), endMs: this.at(), keypad: true };
    this.recordLine(line);
    this.options.onLiveLine?.({ role: 'caller', text: digit });
    this.agentWork = this.agentWork.then(() => this.history.addCaller(keypadText(digit)));
    this.reply('answer', { caller: { text: digit, keypad: true } });
  }

  /**
   * A digits node: the keys' tones played into the call like speech (in
   * band: a Media Stream carries no DTMF events out), before what follows.
   */
  private async playDigits(send: string) {
    if (this.ended) return;
    const segment = this.sink.startSegment();
    this.sink.write(segment, dtmfTones(send));
    this.sink.endSegment(segment);
    await this.sink.segmentDone(segment);
  }

  /** The walk ended or failed with nothing to say (a start that hangs up at once): what the reply would have done after its lines. */
  private async afterSilentStep() {
    if (this.walkFailed) return this.endWalkFailed();
    if (this.pendingAction?.kind === 'hang_up') return this.hangUpAndFinish('completed', 'agent_ended');
  }

  private async endWalkFailed() {
    await this.hangUpAndFinish('pathway_error', 'pathway_error', { provider: 'pathway', message: this.walkFailed! });
  }

  // ---- caller audio → recording, recognition, VAD → turn-taking

  private onCallerFrame(frame: Int16Array, native?: Int16Array) {
    if (this.ended) return;
    const frameStart = this.clock.now() - FRAME_MS;
    this.recording.writeCaller(frame);
    const frameNumber = this.framesIn++;
    const heard =
      this.sttRate === 8000
        ? frame
        : native && native.length === this.sttRate / 50
          ? native
          : resample(frame, 8000, this.sttRate);
    this.replay.push(heard);
    this.stream?.write(heard);
    const probability = () => this.options.vad.process(frame);
    if (!this.vadChain) {
      const p = probability();
      if (typeof p === 'number') return this.onProbability(p, frameStart, frameNumber);
      this.vadChain = p.then((value) => this.onProbability(value, frameStart, frameNumber));
    } else {
      // The transport paces caller audio to real time, so a detector behind by a second is itself slow:
      // frames beyond that are not queued (memory), and none is run once the call has ended (CPU).
      if (this.vadWaiting >= MAX_VAD_WAITING) {
        this.vadSkipped++;
        return;
      }
      this.vadWaiting++;
      this.vadChain = this.vadChain.then(async () => {
        this.vadWaiting--;
        if (this.ended) return;
        const p = probability();
        this.onProbability(typeof p === 'number' ? p : await p, frameStart, frameNumber);
      });
    }
    const chain = this.vadChain;
    chain
      .catch(() => this.onProbability(0, frameStart, frameNumber))
      .finally(() => {
        if (this.vadChain === chain) this.vadChain = null;
      });
  }

  private onProbability(probability: number, frameStartMs: number, frameNumber: number) {
    if (this.ended || this.voicemail) return;
    const edge = this.gate.push(probability, frameStartMs, FRAME_MS, frameNumber);
    // Every caller frame is also a tick: barge-in is seen within a frame, not a tick period.
    if (!edge) return this.decide(this.turns.update({ type: 'tick', atMs: this.clock.now() }));
    if (edge.type === 'speech_start') this.utteranceStarted(edge.frame!);
    else this.utteranceEnded(edge.frame!);
    this.decide(this.turns.update({ type: edge.type, atMs: edge.atMs }));
  }

  /** The VAD heard the caller start: a per-utterance recogniser keeps the audio from there (less its pre-roll). */
  private utteranceStarted(frame: number) {
    this.utterances.push({ startFrame: frame, endFrame: null, cutAt: null });
    // Older than the replay buffer: never replayed again.
    const oldest = this.framesIn - this.replay.length;
    while (this.utterances.length > 1 && this.utterances[0]!.cutAt !== null && this.utterances[0]!.cutAt! <= oldest)
      this.utterances.shift();
    this.stream?.startUtterance(this.streamMs(frame));
  }

  private utteranceEnded(frame: number) {
    const open = this.utterances.at(-1);
    if (open && open.cutAt === null) {
      open.endFrame = frame;
      open.cutAt = this.framesIn;
    }
    if (this.stream) this.cut(this.stream, frame);
  }

  private cut(stream: RecognitionStream, endFrame: number) {
    if (!this.options.stt.streaming && this.cutsAwaitingFinal.push(this.clock.now()) > 16)
      this.cutsAwaitingFinal.shift();
    stream.endUtterance(this.streamMs(endFrame));
  }

  /** Stream time (ms) of a caller frame: frames are 20 ms at any rate, counted from the stream's first. */
  private streamMs(frame: number) {
    return Math.max(0, frame - this.streamStartFrame) * FRAME_MS;
  }

  private scheduleTick() {
    this.tickTimer = this.clock.setTimeout(() => {
      if (this.ended) return;
      this.decide(this.turns.update({ type: 'tick', atMs: this.clock.now() }));
      this.scheduleTick();
    }, this.settings.tickMs);
  }

  // ---- recognition, reopened with replay when it drops

  private openRecognition() {
    if (this.ended) return;
    let stream: RecognitionStream;
    try {
      stream = this.options.stt.open({
        signal: this.sttController.signal,
        phrases: this.options.phrases,
        ...(this.sttRate !== 8000 ? { sampleRate: this.sttRate } : {}),
      });
    } catch (error) {
      return this.recognitionDropped(error);
    }
    this.stream = stream;
    // Audio since the last recognised word (at most sttReplayMs of it) goes into the new stream first.
    const from = Math.max(this.recognisedUpToFrame, this.framesIn - this.replay.length);
    const replay = this.replay.last(this.framesIn - from);
    this.streamStartFrame = from;
    this.cutsAwaitingFinal = [];
    if (this.options.stt.streaming) {
      for (const frame of replay) stream.write(frame);
      if (replay.length && !this.gate.inSpeech && this.framesIn > 0) stream.endUtterance();
    } else this.replayUtterances(stream, from, replay);
    (async () => {
      for await (const result of stream.results) this.onRecognition(stream, result);
    })().then(
      () => {
        if (this.stream === stream && !this.ended)
          this.recognitionDropped(new ProviderFailure(this.options.stt.name, 'recognition stream ended'));
      },
      (error) => {
        if (this.stream === stream && !this.ended) this.recognitionDropped(error);
      },
    );
  }

  /** A per-utterance stream hears only utterances: each since `from` is opened and cut again where it was, in the order it was. */
  private replayUtterances(stream: RecognitionStream, from: number, replay: Int16Array[]) {
    const pending = this.utterances.filter((u) => u.cutAt === null || u.cutAt > from);
    let next = 0;
    let opened = false;
    for (const [i, frame] of replay.entries()) {
      stream.write(frame);
      const written = from + i + 1;
      const u = pending[next];
      if (!u) continue;
      if (!opened && u.startFrame < written) {
        stream.startUtterance(this.streamMs(u.startFrame));
        opened = true;
      }
      if (opened && u.cutAt !== null && u.cutAt <= written) {
        this.cut(stream, u.endFrame!);
        opened = false;
        next++;
      }
    }
  }

  private onRecognition(stream: RecognitionStream, result: RecognitionResult) {
    if (this.ended || this.voicemail || this.stream !== stream) return;
    if (result.text.trim()) this.sttFailuresInRow = 0;
    const cutAt = result.final ? this.cutsAwaitingFinal.shift() : undefined;
    if (cutAt !== undefined) this.options.onRecognitionTime?.(this.clock.now() - cutAt);
    if (result.final)
      this.recognisedUpToFrame = Math.max(
        this.recognisedUpToFrame,
        this.streamStartFrame + Math.ceil(result.endMs / FRAME_MS),
      );
    if (result.recognised === false) this.lastRecognised = false;
    const floor = this.options.minConfidence;
    const unclear = result.final && floor !== undefined && result.confidence !== undefined && result.confidence < floor;
    this.decide(
      this.turns.update({
        type: 'recognition',
        text: result.text,
        final: result.final,
        ...(unclear ? { unclear } : {}),
        atMs: this.clock.now(),
      }),
    );
  }

  private recognitionDropped(error: unknown) {
    const old = this.stream;
    this.stream = null;
    void old?.close().catch(() => {});
    this.sttFailuresInRow++;
    if (this.sttFailuresInRow > this.settings.sttReopenAttempts) {
      const failure =
        error instanceof ProviderFailure
          ? error
          : new ProviderFailure(this.options.stt.name, error instanceof Error ? error.message : String(error));
      return this.fail(failure);
    }
    // The first reopen is immediate; a stream that keeps failing is retried after 0.5 s, 1 s, …
    // (caller audio meanwhile waits in the replay buffer).
    const delay = (this.sttFailuresInRow - 1) * 500;
    if (delay === 0) this.openRecognition();
    else this.clock.setTimeout(() => this.openRecognition(), delay);
  }

  // ---- decisions

  private decide(decisions: TurnDecision[]) {
    for (const d of decisions) {
      if (this.ended) return;
      switch (d.type) {
        case 'end_of_turn': {
          const line: TranscriptLine = {
            role: 'caller',
            text: d.text,
            startMs: this.at(d.startMs),
            endMs: this.at(d.endMs),
          };
          if (this.lastRecognised === false) line.recognised = false;
          this.lastRecognised = undefined;
          this.recordLine(line);
          this.options.onLiveLine?.({ role: 'caller', text: line.text });
          this.transport.notify({ type: 'transcript', role: 'caller', text: line.text, final: true });
          // After the cut reply (if one is still settling) has put its heard part into the history.
          this.agentWork = this.agentWork.then(() => this.history.addCaller(d.modelText));
          this.unheardAfterCut = '';
          // No final (the turn ended on an interim after the endpoint's longest wait): that wait was for the recogniser.
          const sttMs = Math.max(0, (d.finalAtMs ?? this.clock.now()) - d.endMs);
          const prefetch = this.prefetch ?? undefined;
          this.prefetch = null;
          this.reply('answer', { turnEndMs: d.endMs, sttMs, caller: { text: d.modelText }, prefetch });
          break;
        }
        case 'turn_likely':
          this.askAhead(d.modelText);
          break;
        case 'barge_in':
          this.interrupt();
          break;
        case 'false_interruption':
          if (this.unheardAfterCut) this.reply('resume', { text: this.unheardAfterCut });
          this.unheardAfterCut = '';
          break;
        case 'reprompt':
          this.reply('reprompt', { text: this.settings.repromptText });
          break;
        case 'end':
          void this.hangUpAndFinish(d.reason === 'max_duration' ? 'max_duration' : 'completed', d.reason);
          break;
      }
    }
  }

  /**
   * Every word of the caller's turn is final: the model is asked now for the
   * reply the turn will want, while the endpoint's silence runs out. Only where
   * the words go to the model untouched, and nothing else is due first.
   */
  private askAhead(modelText: string) {
    if (!this.settings.askModelAhead || !this.agent.modelTakesSpokenTurns || this.ended || this.voicemail) return;
    // The history will change before this turn's reply asks: a reply still settling, lines of a cut one to say.
    if (this.repliesInFlight || this.unsaidLines.length) return;
    const request = modelRequest(
      this.history.messagesAfterCaller(modelText),
      this.agent.systemPrompt(),
      this.agent.tools,
    );
    // The caller paused again on the same words: the answer asked the first time still holds.
    if (this.prefetch?.asks(request)) return;
    this.dropPrefetch();
    this.prefetch = new ModelPrefetch(this.options.model, request);
  }

  private dropPrefetch() {
    this.prefetch?.abort();
    this.prefetch = null;
  }

  /** Barge-in: one path. Abort the reply (and any queued), drop the audio, forget a pending hang-up. */
  private interrupt() {
    this.dropPrefetch();
    this.cancelGeneration++;
    this.current?.controller.abort(new Error('barge-in'));
    this.sink.clear();
    this.pendingAction = null;
  }

  private reply(
    kind: ReplyKind,
    request: {
      text?: string;
      turnEndMs?: number;
      sttMs?: number;
      caller?: { text: string; keypad?: boolean };
      /** The model asked ahead for this turn: its answer is taken if the reply asks exactly that. */
      prefetch?: ModelPrefetch;
    },
  ) {
    const id = ++this.replySeq;
    const generation = this.cancelGeneration;
    this.repliesInFlight++;
    if (!this.voicemail) this.decide(this.turns.update({ type: 'agent', state: 'replying', atMs: this.clock.now() }));
    this.agentWork = this.agentWork
      .then(async () => {
        if (this.ended || generation !== this.cancelGeneration) return;
        const controller = new AbortController();
        this.current = { id, controller };
        let text = request.text;
        // Lines a spoken-over turn left (see below) come before a reprompt or a resumed line: they were never heard.
        if ((kind === 'reprompt' || kind === 'resume') && this.unsaidLines.length)
          text = this.unsaidLines.splice(0).join(' ');
        if (request.caller) {
          // What the caller's turn does before the model (the sandbox walk, a keypad edge, a tool's keywords).
          const plan = await this.agent.callerTurn(request.caller.text, {
            keypad: request.caller.keypad,
            signal: controller.signal,
          });
          const lines = [...this.unsaidLines.splice(0), ...plan.say];
          // The caller spoke while the turn's steps ran: the walk has moved all the same, its lines wait for the next answer.
          if (controller.signal.aborted) {
            this.unsaidLines = lines;
            if (this.current?.id === id) this.current = null;
            return;
          }
          if (lines.length) text = lines.join(' ');
          else if (!plan.askModel) {
            if (this.current?.id === id) this.current = null;
            // A turn the pathway took in silence.
            return this.afterReply(kind, id, emptyFacts(this.voiceIndex));
          }
        }
        const facts = await runReply(
          {
            model: request.prefetch?.model ?? this.options.model,
            tools: this.agent.tools,
            systemPrompt: () => this.agent.systemPrompt(),
            voices: this.options.voices,
            sink: this.sink,
            clock: this.clock,
            callStartMs: this.startMs,
            llmDeadlineMs: this.settings.llmDeadlineMs,
            apology: this.settings.apology,
            onToolCall: (call) => this.recordToolCall(call),
            onSentenceStart: (text) => {
              if (!this.ended) this.liveLines.sentenceStarted(text);
            },
          },
          {
            signal: controller.signal,
            text,
            messages: text === undefined ? this.history.messages() : undefined,
            turnEndMs: request.turnEndMs,
            sttMs: request.sttMs,
          },
          this.voiceIndex,
        );
        if (this.current?.id === id) this.current = null;
        await this.afterReply(kind, id, facts);
      })
      .catch((error) => this.fail(error))
      .finally(() => {
        this.repliesInFlight--;
        request.prefetch?.abort();
      });
  }

  private async afterReply(kind: ReplyKind, id: number, facts: ReplyFacts) {
    if (this.ended) return;
    this.voiceIndex = facts.voiceIndex;
    const heard = heardText(facts.segments, facts.pending);
    const interrupted = facts.interrupted && heard.interrupted;
    const roundCount = Math.max(facts.rounds.length, ...facts.segments.map((s) => s.round + 1), 0);
    const rounds = Array.from({ length: roundCount }, (_, r) => ({
      text: heard.rounds.find((h) => h.round === r)?.text ?? '',
      toolCalls: facts.rounds[r]?.toolCalls ?? [],
    }));
    const turn = this.history.addAgent(rounds, interrupted, facts.lateToolCalls.length > 0);
    for (const late of facts.lateToolCalls) this.awaitLateToolCall(turn, late);
    this.liveLines.replyOver(facts.segments, heard, interrupted);
    if (heard.text) {
      const line: TranscriptLine = {
        role: 'agent',
        text: heard.text,
        startMs: this.at(facts.firstFrameAtMs ?? this.clock.now()),
        endMs: this.at(),
      };
      if (interrupted) line.interrupted = true;
      if (kind === 'answer' && facts.latency) line.latency = facts.latency;
      this.recordLine(line);
    }
    if (facts.interrupted) this.unheardAfterCut = heard.unheard;
    if (facts.fatal)
      return this.fail(
        new ProviderFailure(facts.errors.at(-1)?.provider ?? 'speech', facts.errors.at(-1)?.message ?? 'no voice'),
      );
    if (kind === 'answer') {
      // Two model errors in one reply: the retry failed too and the apology was said.
      const modelFailed = facts.errors.filter((e) => e.provider === this.options.model.name).length >= 2;
      this.modelFailuresInRow = modelFailed ? this.modelFailuresInRow + 1 : 0;
      if (this.modelFailuresInRow >= this.settings.maxModelFailures) {
        const e = facts.errors.filter((x) => x.provider === this.options.model.name).at(-1)!;
        return this.fail(new ProviderFailure(e.provider, e.message));
      }
    }
    if (kind === 'voicemail') return this.hangUpAndFinish('voicemail', 'voicemail');
    if (facts.interrupted) return;
    if (this.replySeq === id) this.decide(this.turns.update({ type: 'agent', state: 'idle', atMs: this.clock.now() }));
    // The walk failed: once its line has played the call ends (a barge-in over the line only delays it).
    if (this.walkFailed && this.replySeq === id) return this.endWalkFailed();
    const action = this.pendingAction;
    if (action && this.replySeq === id) {
      this.pendingAction = null;
      if (action.kind === 'hang_up') await this.hangUpAndFinish('completed', 'agent_ended');
      else {
        this.endingAs = { outcome: 'transferred', reason: 'transferred' };
        try {
          await this.options.control.transfer?.(action.target);
        } catch (error) {
          return this.fail(error);
        }
        this.finish('transferred', 'transferred');
      }
    }
  }

  private recordLine(line: TranscriptLine) {
    const node = this.agent.node;
    if (node !== undefined) line.node = node;
    this.transcript.push(line);
    this.options.onTranscript?.(line);
  }

  private recordToolCall(call: ToolCallRecord) {
    this.toolCalls.push(call);
    this.options.onToolCall?.(call);
    this.transport.notify({ type: 'tool', name: call.name, arguments: call.arguments, result: call.result });
  }

  /**
   * A tool call that acts (a booking) was running when the caller spoke over
   * the agent: it goes on. Its result is not spoken into the turn the caller
   * moved to: it is recorded when it settles and joins the cut turn in the
   * history, so the model is told from its next request.
   */
  private awaitLateToolCall(turn: AgentTurn, late: LateToolCall) {
    const settled = late.settled.then(
      (done) => {
        this.recordToolCall({
          name: late.call.function.name,
          arguments: done.arguments,
          result: done.result,
          atMs: late.atMs,
        });
        this.history.addLateToolCall(turn, late.round, { call: late.call, result: JSON.stringify(done.result) });
      },
      () => {},
    );
    this.lateToolCalls.add(settled);
    void settled.finally(() => this.lateToolCalls.delete(settled));
  }

  private async hangUpAndFinish(
    outcome: CallOutcomeKind,
    reason: string,
    error?: { provider: string; message: string },
  ) {
    if (this.ended) return;
    this.endingAs ??= { outcome, reason };
    this.interruptForEnd();
    try {
      await this.options.control.hangUp();
    } catch {
      // The stream closes below whatever the carrier said; closing it ends a <Connect><Stream> call too.
    }
    this.finish(outcome, reason, error);
  }

  private interruptForEnd() {
    this.cancelGeneration++;
    this.current?.controller.abort(new Error('call ending'));
  }

  private fail(error: unknown) {
    const failure =
      error instanceof ProviderFailure
        ? { provider: error.provider, message: error.message.replace(`${error.provider}: `, '') }
        : { provider: 'voice_session', message: error instanceof Error ? error.message : String(error) };
    this.finish('provider_error', 'provider_error', failure);
  }

  /** The record's pathway, warnings and variables. */
  private walkRecord(): Pick<CallOutcome, 'pathway' | 'warnings' | 'variables'> {
    const snapshot = this.agent.snapshot();
    const variables = this.agent.variables;
    return {
      ...(snapshot ? { pathway: snapshot } : {}),
      ...(this.walkWarnings.length ? { warnings: [...new Set(this.walkWarnings)] } : {}),
      ...(Object.keys(variables).length ? { variables } : {}),
    };
  }

  private finish(outcome: CallOutcomeKind, reason?: string, error?: { provider: string; message: string }) {
    if (this.ended) return;
    this.ended = true;
    this.tickTimer?.cancel();
    this.dropPrefetch();
    this.interruptForEnd();
    this.callController.abort(new Error('call ended'));
    this.sink.close();
    this.sttController.abort();
    void this.stream?.close().catch(() => {});
    this.stream = null;
    this.transport.close(reason ?? outcome);
    const durationMs = this.at();
    const resolve = () =>
      this.resolveOutcome({
        outcome,
        ...(reason ? { reason } : {}),
        // Lines are emitted when known (a cut agent line after the caller's words that cut it): the record is in time order.
        transcript: [...this.transcript].sort((a, b) => a.startMs - b.startMs),
        toolCalls: [...this.toolCalls].sort((a, b) => a.atMs - b.atMs),
        durationMs,
        recording: this.recording.channels(),
        ...(error ? { error } : {}),
        ...this.walkRecord(),
      });
    if (!this.lateToolCalls.size) return resolve();
    // A booking sent before the end is in the record with its result (for a while: a provider that never answers does not hold the call).
    const waited = new AbortController();
    void Promise.race([
      Promise.allSettled([...this.lateToolCalls]),
      sleep(this.clock, LATE_TOOL_CALL_WAIT_MS, waited.signal).catch(() => {}),
    ]).then(() => {
      waited.abort();
      resolve();
    });
  }
}
