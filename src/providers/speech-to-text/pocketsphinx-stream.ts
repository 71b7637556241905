// One call's offline recognition (pocketsphinx.ts): each utterance the VAD
// opens (startUtterance) gets a live decoder that is fed the utterance as the
// caller speaks (pocketsphinx-live.ts); at the cut it is told the audio ended,
// and its words decide the result (the grammar pass runs after the cut only
// when they match no line well). The call's utterances go through one lane:
// at most one decoder process per call at a time; an utterance that starts
// while the previous one is still being decided waits, its audio held, and
// is fed what it missed when its decoder starts. Results come in order.
import { ProviderFailure } from '../failure.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream } from './interface.js';
import type { LiveDecoder, LiveResult } from './pocketsphinx-live.js';
import type { PocketsphinxEngine, PreparedSearch } from './pocketsphinx-types.js';
import { type CutUtterance, UtteranceWindow } from './utterance-window.js';

/** Audio kept of one utterance: its last 30 s (a caller who never pauses cannot grow a call's memory without end). */
export const MAX_UTTERANCE_MS = 30_000;
/** Utterances of one call waiting for a decoder; a call that cuts more (noise the VAD keeps cutting) gets empty results for them, so it cannot hold the decoders every call shares. */
export const MAX_WAITING_UTTERANCES = 8;
/**
 * The live decoder is kept this far behind the newest audio: the VAD reports
 * an end after 200 ms of silence (vad.ts, 10 frames), and the cut is its end
 * of speech plus the post-roll, so the audio held back is mostly past the cut.
 */
const HOLD_MS = 200;

interface Utterance {
  id: number;
  /** Stream position of its first sample. */
  from: number;
  /** Samples of it written to its live decoder. */
  fed: number;
  decoder: LiveDecoder | null;
  /** Set at the cut (null if the stream closed first). */
  cut: CutUtterance | null;
  /** It outgrew MAX_UTTERANCE_MS and lost its start: decoded whole after the cut. */
  truncated: boolean;
  /** More than MAX_WAITING_UTTERANCES before it: answered empty. */
  skipped: boolean;
  whenCut: Promise<void>;
  markCut(): void;
}

class StreamClosed extends Error {}

export class PocketsphinxStream implements RecognitionStream {
  private readonly window: UtteranceWindow;
  private readonly sampleRate: 8000 | 16000;
  private readonly holdSamples: number;
  private open: Utterance | null = null;
  private utterances = 0;
  private readonly pending: Array<Promise<RecognitionResult>> = [];
  /** Utterances started and not yet recognised. */
  private waiting = 0;
  private lane: Promise<unknown> = Promise.resolve();
  private readonly decoders = new Set<LiveDecoder>();
  /** The previous utterance's final cepstral mean: where the next live decode starts. */
  private cmnInit: string | null = null;
  private wake: (() => void) | null = null;
  private closed = false;
  private readonly controller = new AbortController();
  private search: Promise<PreparedSearch> | null = null;

  constructor(
    private readonly provider: PocketsphinxEngine,
    private readonly options: RecognitionOptions,
  ) {
    this.sampleRate = options.sampleRate ?? 8000;
    this.window = new UtteranceWindow(this.sampleRate, MAX_UTTERANCE_MS);
    this.holdSamples = this.window.samplesOf(HOLD_MS);
    options.signal.addEventListener('abort', () => void this.close(), { once: true });
  }

  write(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    this.window.write(pcm);
    const u = this.open;
    if (!u) return;
    if (this.window.truncated && !u.truncated) {
      u.truncated = true;
      u.decoder?.kill();
    }
    if (!u.truncated) this.feed(u, this.window.written - this.holdSamples);
  }

  startUtterance(atMs?: number): void {
    if (this.closed || this.open) return;
    this.window.start(atMs);
    let markCut!: () => void;
    const whenCut = new Promise<void>((resolve) => (markCut = resolve));
    const u: Utterance = {
      id: ++this.utterances,
      from: this.window.utteranceStart!,
      fed: 0,
      decoder: null,
      cut: null,
      truncated: false,
      skipped: this.waiting >= MAX_WAITING_UTTERANCES,
      whenCut,
      markCut,
    };
    this.open = u;
    this.waiting++;
    const result = this.lane.then(() => this.recognise(u)).finally(() => this.waiting--);
    this.lane = result.catch(() => {});
    result.catch(() => {}); // observed by the reader; never an unhandled rejection
    this.pending.push(result);
    this.wake?.();
  }

  endUtterance(atMs?: number): void {
    if (this.closed) return;
    const u = this.open;
    if (!u) {
      // No utterance open (a cut the session replays, a test): an empty result, nothing decoded.
      const now = this.window.msOf(this.window.written);
      this.pending.push(Promise.resolve({ text: '', final: true, startMs: now, endMs: now }));
      this.wake?.();
      return;
    }
    if (this.window.truncated) u.truncated = true;
    this.open = null;
    u.cut = this.window.end(atMs);
    u.markCut();
  }

  get results(): AsyncIterable<RecognitionResult> {
    return {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<RecognitionResult>> => {
          while (this.pending.length === 0 && !this.closed) await new Promise<void>((resolve) => (this.wake = resolve));
          const next = this.pending.shift();
          if (!next || this.closed) return { done: true, value: undefined };
          try {
            const value = await next;
            return this.closed ? { done: true, value: undefined } : { done: false, value };
          } catch (err) {
            // A decoder killed because the call ended is not a failure of the call.
            if (this.closed) return { done: true, value: undefined };
            throw err;
          }
        },
      }),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.controller.abort();
    for (const decoder of this.decoders) decoder.kill();
    this.open?.markCut();
    this.open = null;
    this.pending.length = 0;
    this.wake?.();
    await this.lane;
    const search = this.search;
    if (search) await search.then((s) => this.provider.removeSearch(s)).catch(() => {});
  }

  /** Writes the utterance's audio up to stream position `upTo` to its live decoder. */
  private feed(u: Utterance, upTo: number) {
    if (!u.decoder) return;
    const to = Math.min(upTo, this.window.written);
    if (to <= u.from + u.fed) return;
    u.decoder.write(this.window.slice(u.from + u.fed, to));
    u.fed = to - u.from;
  }

  private checkOpen() {
    if (this.closed) throw new StreamClosed();
  }

  private async recognise(u: Utterance): Promise<RecognitionResult> {
    try {
      this.checkOpen();
      const search = await (this.search ??= this.provider.prepare(this.options.phrases));
      this.checkOpen();
      const live = u.skipped ? null : await this.decodeLive(u, search);
      await u.whenCut;
      this.checkOpen();
      const cut = u.cut!;
      const base = { final: true, startMs: cut.startMs, endMs: cut.endMs };
      if (u.skipped || this.provider.isSilent(cut.pcm))
        return { text: '', ...base, ...(u.skipped ? {} : { confidence: 0 }) };
      const signal = this.controller.signal;
      const r = live
        ? await this.provider.conclude(search, u.id, live.text, cut.pcm, signal, this.sampleRate)
        : await this.provider.recognise(search, u.id, cut.pcm, signal, this.sampleRate);
      // The next utterance starts from this one's cepstral mean (one with words: noise would mislead it).
      if (live?.cmnAfter && live.text.trim()) this.cmnInit = live.cmnAfter;
      return { text: r.text, ...base, confidence: r.confidence };
    } catch (err) {
      if (err instanceof StreamClosed) throw err;
      throw err instanceof ProviderFailure
        ? err
        : new ProviderFailure('pocketsphinx', err instanceof Error ? err.message : String(err));
    }
  }

  /** The utterance's words from a decoder fed as it is spoken; null when it is to be decoded whole after the cut instead. */
  private async decodeLive(u: Utterance, search: PreparedSearch): Promise<LiveResult | null> {
    if (u.truncated || (u.cut && this.provider.isSilent(u.cut.pcm))) return null;
    const release = await this.provider.liveSlots.acquire();
    let decoder: LiveDecoder | null = null;
    try {
      this.checkOpen();
      if (u.truncated) return null;
      decoder = await this.provider.startLive(search, this.sampleRate, this.cmnInit);
      this.decoders.add(decoder);
      this.checkOpen();
      decoder.writeSilence(this.provider.padSamples);
      u.decoder = decoder;
      // What it missed while it waited for the lane and started: the utterance so far, or all of it once cut.
      if (u.cut) {
        decoder.write(u.cut.pcm);
        u.fed = u.cut.pcm.length;
      } else this.feed(u, this.window.written - this.holdSamples);
      await u.whenCut;
      this.checkOpen();
      const cut = u.cut!;
      if (u.truncated || decoder.behind || this.provider.isSilent(cut.pcm)) return null;
      if (u.fed < cut.pcm.length) decoder.write(cut.pcm.subarray(u.fed));
      return await decoder.finish(this.provider.timeoutMs, this.provider.padSamples);
    } finally {
      u.decoder = null;
      if (decoder) {
        await decoder.stop();
        this.decoders.delete(decoder);
      }
      release();
    }
  }
}
