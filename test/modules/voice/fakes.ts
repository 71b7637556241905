// Fixtures for the voice pipeline tests: a fake Twilio socket that echoes
// marks when told (or as its audio "plays"), a scripted recogniser, a
// tone-speaking voice, a scripted model, and a driver that feeds caller audio
// in real-time steps of a ManualClock.
import { FRAME_SAMPLES_8K, pcmToMulaw } from '../../../src/lib/audio.js';
import type { ManualClock, Timer } from '../../../src/lib/clock.js';
import type { CallSpeech, CallVoice } from '../../../src/providers/call-speech/interface.js';
import { ProviderFailure } from '../../../src/providers/failure.js';
import type { CompletionRequest, LanguageModel, ModelDelta } from '../../../src/providers/language-model/interface.js';
import type {
  RecognitionOptions,
  RecognitionResult,
  RecognitionStream,
  SpeechToText,
} from '../../../src/providers/speech-to-text/interface.js';
import type { SocketLike } from '../../../src/modules/voice/transport.js';

export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

type Listener = (...args: any[]) => void;

/** A ws-like socket; `sent` holds what the server sent (JSON parsed when text). */
export class FakeSocket implements SocketLike {
  sent: any[] = [];
  closedWith: { code?: number; reason?: string } | null = null;
  private listeners: Record<string, Listener[]> = { message: [], close: [] };
  /** Echo marks as Twilio would once the audio before them has played (needs a clock). */
  autoEcho: ManualClock | null = null;
  private playoutEndMs = 0;
  private pendingEchoes: Array<{ name: string; timer: Timer }> = [];
  streamSid = 'MZ0001';

  send(data: string | Uint8Array) {
    const message = typeof data === 'string' ? JSON.parse(data) : Buffer.from(data);
    this.sent.push(message);
    if (!this.autoEcho || typeof data !== 'string') return;
    const clock = this.autoEcho;
    if (message.event === 'media') this.playoutEndMs = Math.max(this.playoutEndMs, clock.now()) + 20;
    else if (message.event === 'mark') {
      const name = message.mark.name as string;
      const entry = {
        name,
        timer: clock.setTimeout(() => this.echo(name, entry), Math.max(0, this.playoutEndMs - clock.now())),
      };
      this.pendingEchoes.push(entry);
    } else if (message.event === 'clear') {
      // Twilio drops its buffer and echoes every pending mark.
      this.playoutEndMs = clock.now();
      for (const e of this.pendingEchoes.splice(0)) {
        e.timer.cancel();
        this.emit(
          'message',
          JSON.stringify({ event: 'mark', sequenceNumber: '9', streamSid: this.streamSid, mark: { name: e.name } }),
          false,
        );
      }
    }
  }

  private echo(name: string, entry: { name: string; timer: Timer }) {
    this.pendingEchoes = this.pendingEchoes.filter((e) => e !== entry);
    this.emit(
      'message',
      JSON.stringify({ event: 'mark', sequenceNumber: '9', streamSid: this.streamSid, mark: { name } }),
      false,
    );
  }

  close(code?: number, reason?: string) {
    this.closedWith = { code, reason };
  }

  on(event: 'message' | 'close', listener: Listener) {
    this.listeners[event]!.push(listener);
    return this;
  }

  emit(event: 'message' | 'close', ...args: unknown[]) {
    for (const l of this.listeners[event]!) l(...args);
  }

  receive(message: unknown) {
    this.emit('message', JSON.stringify(message), false);
  }

  start(customParameters: Record<string, string> = { token: 't' }) {
    this.receive({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.receive({
      event: 'start',
      sequenceNumber: '1',
      streamSid: this.streamSid,
      start: {
        accountSid: 'AC1',
        streamSid: this.streamSid,
        callSid: 'CA1',
        tracks: ['inbound'],
        customParameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  }

  private chunk = 0;
  media(pcm: Int16Array) {
    this.chunk++;
    this.receive({
      event: 'media',
      sequenceNumber: String(this.chunk + 1),
      streamSid: this.streamSid,
      media: {
        track: 'inbound',
        chunk: String(this.chunk),
        timestamp: String(this.chunk * 20),
        payload: Buffer.from(pcmToMulaw(pcm)).toString('base64'),
      },
    });
  }

  /** Echoes every mark sent so far that has not been echoed (the test decides when audio "played"). */
  echoMarks(names = this.marks()) {
    for (const name of names)
      this.receive({ event: 'mark', sequenceNumber: '9', streamSid: this.streamSid, mark: { name } });
  }

  marks(): string[] {
    return this.sent.filter((m) => m.event === 'mark').map((m) => m.mark.name);
  }

  count(event: string) {
    return this.sent.filter((m) => m.event === event).length;
  }
}

export function tone(samples: number, amplitude = 8000, hz = 440, rate = 8000): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

export const silence = () => new Int16Array(FRAME_SAMPLES_8K);

/** Speaks a tone: 40 ms per character, in 100 ms chunks, the first after `firstByteMs` of the clock. */
export class ToneSpeech implements CallSpeech {
  spoken: string[] = [];
  failWith: Error | null = null;
  constructor(
    readonly name: string,
    private readonly clock: ManualClock,
    private readonly firstByteMs = 0,
    private readonly msPerChar = 40,
  ) {}
  async *synthesize(text: string, _voice: CallVoice, signal: AbortSignal): AsyncIterable<Int16Array> {
    if (this.failWith) throw this.failWith;
    this.spoken.push(text);
    if (this.firstByteMs) await new Promise<void>((resolve) => this.clock.setTimeout(resolve, this.firstByteMs));
    let left = Math.round((text.length * this.msPerChar * 8000) / 1000);
    while (left > 0 && !signal.aborted) {
      const n = Math.min(800, left);
      yield tone(n, 6000, 300);
      left -= n;
    }
  }
}

class ScriptedStream implements RecognitionStream {
  written: Int16Array[] = [];
  ended = 0;
  /** Stream times (ms) the session gave startUtterance and endUtterance. */
  startsAt: Array<number | undefined> = [];
  endsAt: Array<number | undefined> = [];
  closed = false;
  private queue: Array<RecognitionResult | Error> = [];
  private wake: (() => void) | null = null;
  write(pcm: Int16Array) {
    this.written.push(pcm);
  }
  startUtterance(atMs?: number) {
    this.startsAt.push(atMs);
  }
  endUtterance(atMs?: number) {
    this.ended++;
    this.endsAt.push(atMs);
  }
  push(item: RecognitionResult | Error) {
    this.queue.push(item);
    this.wake?.();
  }
  readonly results: AsyncIterable<RecognitionResult> = {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<RecognitionResult>> => {
        for (;;) {
          if (this.closed) return { done: true, value: undefined };
          const item = this.queue.shift();
          if (item instanceof Error) throw item;
          if (item) return { done: false, value: item };
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
      },
    }),
  };
  async close() {
    this.closed = true;
    this.wake?.();
  }
}

/** A recogniser the test speaks for: say() yields a final result on the open stream; drop() breaks it. */
export class ScriptedStt implements SpeechToText {
  readonly name = 'scripted-stt';
  readonly streaming = true;
  streams: ScriptedStream[] = [];
  /** What each stream was opened with. */
  opened: RecognitionOptions[] = [];
  constructor(readonly wideband = false) {}
  open(options: RecognitionOptions): RecognitionStream {
    this.opened.push(options);
    const stream = new ScriptedStream();
    this.streams.push(stream);
    return stream;
  }
  get current() {
    return this.streams[this.streams.length - 1]!;
  }
  say(text: string, final = true, endMs?: number) {
    const stream = this.current;
    const audioMs = stream.written.length * 20;
    stream.push({ text, final, startMs: 0, endMs: endMs ?? audioMs });
  }
  drop() {
    this.current.push(new ProviderFailure(this.name, 'socket closed (1006)'));
  }
}

export type ModelStep = ModelDelta[] | Error | 'hang';

/**
 * A model answering from a list of steps, one per complete() call; records the messages it was given. `sandbox`:
 * false plays a real model (the session then asks it ahead of the endpoint).
 */
export class ScriptedModel implements LanguageModel {
  readonly name = 'scripted-model';
  requests: CompletionRequest[] = [];
  /** Clock times of each request. */
  requestedAt: number[] = [];
  constructor(
    private readonly steps: ModelStep[],
    private readonly clock?: ManualClock,
    private readonly firstTokenMs = 0,
    readonly sandbox = true,
  ) {}
  async *complete(request: CompletionRequest): AsyncIterable<ModelDelta> {
    this.requests.push({ ...request, messages: [...request.messages] });
    this.requestedAt.push(this.clock?.now() ?? 0);
    const step = this.steps.shift() ?? [{ type: 'text', text: 'Okay.' }];
    if (this.clock && this.firstTokenMs && step !== 'hang')
      await new Promise<void>((resolve) => this.clock!.setTimeout(resolve, this.firstTokenMs));
    if (step === 'hang') {
      await new Promise<void>((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }),
      );
      return;
    }
    if (step instanceof Error) throw step;
    for (const delta of step) {
      if (request.signal.aborted) throw request.signal.reason;
      yield delta;
      await Promise.resolve();
    }
  }
}

/** A real model (not the sandbox engine: a pathway moves only by its tool calls) answering from a list of steps; records each request. */
export class ScriptedRealModel implements LanguageModel {
  readonly name = 'openai';
  readonly sandbox = false;
  requests: CompletionRequest[] = [];
  constructor(private readonly steps: ModelDelta[][]) {}
  async *complete(request: CompletionRequest): AsyncIterable<ModelDelta> {
    this.requests.push({ ...request, messages: request.messages.map((m) => ({ ...m })) });
    for (const delta of this.steps.shift() ?? [text('Okay.')]) yield delta;
  }
}

export const text = (t: string): ModelDelta => ({ type: 'text', text: t });
export const toolCall = (id: string, name: string, args: unknown): ModelDelta => ({
  type: 'tool_call',
  call: { id, type: 'function', function: { name, arguments: JSON.stringify(args) } },
});

/** Advances the clock in 20 ms steps (flushing promises between) until the promise settles. */
export async function settle<T>(clock: ManualClock, promise: Promise<T>, maxMs = 120_000, stepMs = 20): Promise<T> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await flush();
  for (let t = 0; !done && t < maxMs; t += stepMs) {
    clock.advance(stepMs);
    await flush();
  }
  if (!done) throw new Error(`still pending after ${maxMs} ms of clock time`);
  return promise;
}
