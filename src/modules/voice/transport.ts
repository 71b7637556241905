// What a media connection offers a voice session (DESIGN "Voice agent",
// "Calls from a browser"): caller audio in as PCM16 mono 8 kHz 20 ms frames,
// agent audio out in the same frames, marks (sent, and echoed once played),
// clear, DTMF, the far end going away, and close with a reason. Twilio Media
// Streams and the browser socket are two framings of this one contract; the
// session never sees either.
import { FRAME_SAMPLES_8K, cutFrames, mulawToPcm, pcmToMulawInto, resample } from '../../lib/audio.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import {
  type AllowanceOptions,
  CALLER_AUDIO_ALLOWANCE,
  CONTROL_MESSAGE_ALLOWANCE,
  RealTimeAllowance,
} from './real-time-allowance.js';
import {
  formatClear,
  formatMark,
  mediaTemplate,
  parseTwilioMessage,
  TwilioMessageError,
  type TwilioInbound,
} from './twilio-codec.js';

export interface TransportEvents {
  /**
   * One caller frame: 160 samples of PCM16 at 8 kHz. A transport whose far
   * end sends more (the browser: 16 kHz) passes the same 20 ms at its own
   * rate too, for a recogniser that can use it.
   */
  audio: (frame: Int16Array, native?: Int16Array) => void;
  /** The far end played the audio up to this mark. */
  mark: (name: string) => void;
  dtmf: (digit: string) => void;
  /** The far end went away (stream stopped, hang-up, socket closed), or was shut out for breaking the protocol (MEDIA_VIOLATIONS). Emitted once. */
  stop: (reason: string) => void;
  /** A message that could not be read; the socket was closed for it (stop `invalid_message`). */
  invalid: (error: Error) => void;
}

/**
 * Stop reasons of a far end shut out for what it sent, not gone by itself:
 * a message that is not the protocol's (`invalid_message`), too big
 * (`message_too_big`), or audio or other messages far faster than real time
 * (`audio_flood`, `message_flood`). A call ending so is `refused`.
 */
export const MEDIA_VIOLATIONS: ReadonlySet<string> = new Set([
  'invalid_message',
  'message_too_big',
  'audio_flood',
  'message_flood',
]);

/** Close codes of those violations (RFC 6455): data that cannot be read, a message the protocol does not have (or a flood), too big. */
export const CLOSE_UNREADABLE = 1007;
export const CLOSE_POLICY = 1008;
export const CLOSE_TOO_BIG = 1009;

/** A Twilio Media Streams message is well under 1 KB (a 20 ms media frame about 400 bytes; `start` with our token under 2 KB). */
export const MAX_TWILIO_MESSAGE_BYTES = 4096;

/** How much a far end may send (real-time-allowance.ts), on which clock; tests that feed audio faster than the wall clock pass their own. */
export interface InflowOptions {
  clock?: Clock;
  audio?: AllowanceOptions;
  control?: AllowanceOptions;
}

/** What was accepted and dropped of what the far end sent, so far. */
export interface InflowCounts {
  audioMs: number;
  droppedAudioMs: number;
  droppedMessages: number;
}

/** Things only a transport with a screen shows (the browser); Twilio ignores them. */
export type TransportNotice =
  /** An agent line with `final: false` is the reply being said (sentence by sentence as each starts); `final: true` what was heard of it. */
  | { type: 'transcript'; role: 'agent' | 'caller'; text: string; final: boolean; interrupted?: boolean }
  | { type: 'tool'; name: string; arguments: unknown; result: unknown };

export interface Transport {
  readonly kind: 'twilio' | 'web';
  /** The rate caller audio arrives at (8000 for Twilio; the announced rate for the browser). */
  readonly callerSampleRate: number;
  /** Why the far end went away, once it has (null while it is there). */
  readonly stopReason: string | null;
  on<K extends keyof TransportEvents>(event: K, listener: TransportEvents[K]): void;
  /** One agent frame, 160 samples of PCM16 at 8 kHz. */
  sendAudio(frame: Int16Array): void;
  sendMark(name: string): void;
  sendClear(): void;
  notify(notice: TransportNotice): void;
  /** Ends the media connection; reason is told to the far end when the framing allows it. Idempotent. */
  close(reason: string): void;
  readonly closed: boolean;
  /** What the far end sent that was taken and dropped, so far. */
  readonly inflow: InflowCounts;
}

/** The part of a `ws` WebSocket a transport uses (tests pass a fake). */
export interface SocketLike {
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  // ws's overloads differ per event; listeners are checked at the call sites below.
  on(event: 'message' | 'close', listener: (...args: any[]) => void): unknown;
}

type Listeners = { [K in keyof TransportEvents]: Array<TransportEvents[K]> };

/** Listener bookkeeping, frame cutting, real-time pacing of what comes in and the once-only stop/close shared by both framings. */
abstract class BaseTransport {
  private listeners: Listeners = { audio: [], mark: [], dtmf: [], stop: [], invalid: [] };
  private carry: Int16Array = new Int16Array(0);
  private stopped = false;
  stopReason: string | null = null;
  protected closing = false;
  invalidMessages = 0;
  private readonly audioIn: RealTimeAllowance;
  private readonly controlIn: RealTimeAllowance;

  constructor(inflow: InflowOptions = {}) {
    const clock = inflow.clock ?? systemClock;
    this.audioIn = new RealTimeAllowance(clock, inflow.audio ?? CALLER_AUDIO_ALLOWANCE);
    this.controlIn = new RealTimeAllowance(clock, inflow.control ?? CONTROL_MESSAGE_ALLOWANCE);
  }

  get inflow(): InflowCounts {
    return {
      audioMs: this.audioIn.accepted,
      droppedAudioMs: this.audioIn.dropped,
      droppedMessages: this.controlIn.dropped,
    };
  }

  /**
   * `frames` caller frames of `frameMs` each arrived: how many of them (the
   * first ones) are taken, at real time plus the allowance. The rest are
   * dropped before any decoding; a far end that keeps flooding is shut out.
   */
  protected admitAudio(frames: number, frameMs = 20): number {
    const admitted = this.audioIn.take(frames, frameMs);
    if (this.audioIn.flooding) {
      this.shutOut(CLOSE_POLICY, 'audio_flood');
      return 0;
    }
    return admitted;
  }

  /** One message that is not audio arrived: false when it is dropped (or the far end was shut out for flooding). */
  protected admitControl(): boolean {
    const admitted = this.controlIn.take(1) === 1;
    if (this.controlIn.flooding) {
      this.shutOut(CLOSE_POLICY, 'message_flood');
      return false;
    }
    return admitted;
  }

  on<K extends keyof TransportEvents>(event: K, listener: TransportEvents[K]): void {
    (this.listeners[event] as Array<TransportEvents[K]>).push(listener);
  }

  protected emit<K extends keyof TransportEvents>(event: K, ...args: Parameters<TransportEvents[K]>): void {
    for (const listener of this.listeners[event]) (listener as (...a: unknown[]) => void)(...args);
  }

  /** Cuts caller audio of any length into 160-sample frames, carrying the remainder to the next call. */
  protected pushCallerAudio(samples: Int16Array) {
    // The usual case (Twilio: one whole frame per message, nothing carried): the frame as it came.
    if (this.carry.length === 0 && samples.length === FRAME_SAMPLES_8K) return this.emit('audio', samples);
    const { frames, rest } = cutFrames(this.carry, samples);
    this.carry = rest;
    for (const frame of frames) this.emit('audio', frame);
  }

  /** A message that is not the protocol's: the far end is shut out at the first one (a carrier or browser sends none). */
  protected invalid(error: Error, code = CLOSE_POLICY) {
    this.invalidMessages++;
    this.emit('invalid', error);
    this.shutOut(code, 'invalid_message');
  }

  /** Closes the socket with `code` for what the far end sent; the session hears `stop` with `reason` (one of MEDIA_VIOLATIONS). */
  protected shutOut(code: number, reason: string) {
    if (this.closing) return;
    this.closing = true;
    this.closeSocket(code, reason);
    this.farEndStopped(reason);
  }

  /** Closes the socket; the framing may tell the far end why first. */
  protected abstract closeSocket(code: number, reason: string): void;

  protected farEndStopped(reason: string) {
    if (this.stopped) return;
    this.stopped = true;
    this.stopReason = reason;
    this.emit('stop', reason);
  }

  get closed() {
    return this.closing || this.stopped;
  }
}

export interface TwilioStart {
  streamSid: string;
  callSid: string;
  accountSid: string;
  customParameters: Record<string, string>;
}

/**
 * Twilio Media Streams over a WebSocket. `started` resolves with the `start`
 * message (the route checks `customParameters.token` before building a
 * session); audio before it has no stream to belong to and is ignored.
 */
export class TwilioTransport extends BaseTransport implements Transport {
  readonly kind = 'twilio' as const;
  readonly callerSampleRate = 8000;
  readonly started: Promise<TwilioStart>;
  private streamSid: string | null = null;
  private formatMedia: ((mulaw: Uint8Array) => string) | null = null;
  /** One agent frame's μ-law, reused: its base64 is taken before the next frame is encoded. */
  private readonly mulaw = Buffer.alloc(FRAME_SAMPLES_8K);
  private resolveStart!: (start: TwilioStart) => void;
  private rejectStart!: (error: Error) => void;

  constructor(
    private readonly socket: SocketLike,
    inflow: InflowOptions = {},
  ) {
    super(inflow);
    this.started = new Promise((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.started.catch(() => {});
    socket.on('message', (data: unknown, isBinary?: boolean) => this.onMessage(data, isBinary === true));
    socket.on('close', () => {
      this.rejectStart(new Error('socket closed before start'));
      this.farEndStopped('socket_closed');
    });
    this.on('stop', (reason) => this.rejectStart(new Error(`stream ended before start (${reason})`)));
  }

  private onMessage(data: unknown, isBinary: boolean) {
    // Closed (by the session, or shut out): what the socket still delivers is not read.
    if (this.closed) return;
    if (isBinary) return this.invalid(new TwilioMessageError('binary frame'));
    const size =
      typeof data === 'string'
        ? Buffer.byteLength(data)
        : Buffer.isBuffer(data)
          ? data.length
          : (data as ArrayBuffer).byteLength;
    if (size > MAX_TWILIO_MESSAGE_BYTES) return this.shutOut(CLOSE_TOO_BIG, 'message_too_big');
    let message: TwilioInbound;
    try {
      message = parseTwilioMessage(
        typeof data === 'string'
          ? data
          : Buffer.isBuffer(data)
            ? data.toString('utf8')
            : Buffer.from(data as ArrayBuffer).toString('utf8'),
      );
    } catch (error) {
      return this.invalid(error as Error, (error as Error).message === 'not JSON' ? CLOSE_UNREADABLE : CLOSE_POLICY);
    }
    if (message.event !== 'media' && !this.admitControl()) return;
    switch (message.event) {
      case 'connected':
        if (this.streamSid) return this.invalid(new TwilioMessageError('connected after start'));
        return;
      case 'start':
        if (this.streamSid) return this.invalid(new TwilioMessageError('second start'));
        this.streamSid = message.streamSid;
        this.formatMedia = mediaTemplate(message.streamSid);
        return this.resolveStart({
          streamSid: message.streamSid,
          callSid: message.callSid,
          accountSid: message.accountSid,
          customParameters: message.customParameters,
        });
      case 'media':
        if (!this.streamSid || message.streamSid !== this.streamSid)
          return this.invalid(
            new TwilioMessageError(this.streamSid ? 'media for another stream' : 'media before start'),
          );
        if (message.track !== 'inbound') return;
        if (this.admitAudio(1, message.payload.length / 8) === 0) return;
        return this.pushCallerAudio(mulawToPcm(message.payload));
      case 'mark':
        if (message.streamSid !== this.streamSid)
          return this.invalid(new TwilioMessageError('mark for another stream'));
        return this.emit('mark', message.name);
      case 'dtmf':
        if (message.streamSid !== this.streamSid)
          return this.invalid(new TwilioMessageError('dtmf for another stream'));
        return this.emit('dtmf', message.digit);
      case 'stop':
        if (message.streamSid !== this.streamSid)
          return this.invalid(new TwilioMessageError('stop for another stream'));
        return this.farEndStopped('stream_stopped');
      case 'other':
        // An event Twilio may add later must not end calls; before `start` only connected and start belong (admission).
        if (!this.streamSid)
          return this.invalid(new TwilioMessageError(`unknown event "${message.name}" before start`));
        if (message.streamSid !== null && message.streamSid !== this.streamSid)
          return this.invalid(new TwilioMessageError(`${message.name} for another stream`));
        return;
    }
  }

  /** The `start` message has been read (synchronously, as it arrives; `started` resolves a microtask later). */
  get hasStarted(): boolean {
    return this.streamSid !== null;
  }

  sendAudio(frame: Int16Array) {
    if (!this.formatMedia || this.closed) return;
    const mulaw =
      frame.length <= this.mulaw.length
        ? pcmToMulawInto(frame, this.mulaw).subarray(0, frame.length)
        : pcmToMulawInto(frame, Buffer.alloc(frame.length));
    this.socket.send(this.formatMedia(mulaw));
  }

  sendMark(name: string) {
    if (this.streamSid && !this.closed) this.socket.send(formatMark(this.streamSid, name));
  }

  sendClear() {
    if (this.streamSid && !this.closed) this.socket.send(formatClear(this.streamSid));
  }

  notify() {}

  close(_reason: string) {
    if (this.closing) return;
    this.closing = true;
    this.socket.close(1000, 'call ended');
  }

  protected closeSocket(code: number, reason: string) {
    this.socket.close(code, reason);
  }
}

export interface WebAudioFormat {
  encoding: 'pcm16le';
  sampleRate: number;
  frameMs: 20;
}

export const WEB_AUDIO_FORMAT: WebAudioFormat = { encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 };

/**
 * A browser call (DESIGN "Calls from a browser"): binary PCM16LE frames at the
 * announced rate both ways, JSON text for marks, DTMF, hang-up, transcript,
 * tool calls and the end.
 */
export class WebTransport extends BaseTransport implements Transport {
  readonly kind = 'web' as const;
  readonly callerSampleRate: number;
  private readonly bytesPerFrame: number;
  private socketClosed = false;

  constructor(
    private readonly socket: SocketLike,
    private readonly format: WebAudioFormat = WEB_AUDIO_FORMAT,
    inflow: InflowOptions = {},
  ) {
    super(inflow);
    this.callerSampleRate = format.sampleRate;
    this.bytesPerFrame = (format.sampleRate / 1000) * format.frameMs * 2;
    socket.on('message', (data: unknown, isBinary?: boolean) => this.onMessage(data, isBinary));
    socket.on('close', () => {
      this.socketClosed = true;
      this.farEndStopped('socket_closed');
    });
  }

  private onMessage(data: unknown, isBinary: boolean | undefined) {
    // Closed (by the session, or shut out): what the socket still delivers is not read.
    if (this.closed) return;
    const whole =
      typeof data === 'string'
        ? Buffer.from(data, 'utf8')
        : Buffer.isBuffer(data)
          ? data
          : Array.isArray(data)
            ? Buffer.concat(data)
            : Buffer.from(data as ArrayBuffer);
    const binary = isBinary ?? typeof data !== 'string';
    if (binary) {
      if (whole.length === 0 || whole.length % this.bytesPerFrame !== 0)
        return this.invalid(
          new Error(`audio must be whole ${this.format.frameMs} ms frames of ${this.bytesPerFrame} bytes`),
          CLOSE_UNREADABLE,
        );
      // Paced before anything is decoded: what runs ahead of real time costs nothing.
      const frames = this.admitAudio(whole.length / this.bytesPerFrame, this.format.frameMs);
      if (frames === 0) return;
      const bytes = whole.subarray(0, frames * this.bytesPerFrame);
      const samples = new Int16Array(bytes.length / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
      if (this.format.sampleRate === 8000) return this.pushCallerAudio(samples);
      // Whole 20 ms frames: frame i at 8 kHz is frame i at the browser's rate, passed along with it.
      const narrow = resample(samples, this.format.sampleRate, 8000);
      const wide = this.bytesPerFrame / 2;
      for (let i = 0; i * FRAME_SAMPLES_8K < narrow.length; i++) {
        this.emit(
          'audio',
          narrow.subarray(i * FRAME_SAMPLES_8K, (i + 1) * FRAME_SAMPLES_8K),
          samples.subarray(i * wide, (i + 1) * wide),
        );
      }
      return;
    }
    if (!this.admitControl()) return;
    let message: unknown;
    try {
      message = JSON.parse(whole.toString('utf8'));
    } catch {
      return this.invalid(new Error('not JSON'), CLOSE_UNREADABLE);
    }
    const m = message as { type?: unknown; name?: unknown; digit?: unknown };
    if (m && m.type === 'mark' && typeof m.name === 'string') return this.emit('mark', m.name);
    if (m && m.type === 'dtmf' && typeof m.digit === 'string' && /^[0-9*#A-D]$/.test(m.digit))
      return this.emit('dtmf', m.digit);
    if (m && m.type === 'hangup') return this.farEndStopped('caller_hung_up');
    return this.invalid(new Error('unknown message'));
  }

  sendAudio(frame: Int16Array) {
    if (this.closed) return;
    const samples = resample(frame, 8000, this.format.sampleRate);
    const out = Buffer.alloc(samples.length * 2);
    for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
    this.socket.send(out);
  }

  sendMark(name: string) {
    if (!this.closed) this.socket.send(JSON.stringify({ type: 'mark', name }));
  }

  sendClear() {
    if (!this.closed) this.socket.send(JSON.stringify({ type: 'clear' }));
  }

  notify(notice: TransportNotice) {
    if (!this.closed) this.socket.send(JSON.stringify(notice));
  }

  /** Tells the browser why the call ended (after its own hang-up too), unless its socket is gone, then closes with 1000. */
  close(reason: string) {
    if (this.closing) return;
    this.closing = true;
    this.closeSocket(1000, reason);
  }

  protected closeSocket(code: number, reason: string) {
    if (!this.socketClosed) this.socket.send(JSON.stringify({ type: 'ended', reason }));
    this.socket.close(code, reason.slice(0, 100));
  }
}
