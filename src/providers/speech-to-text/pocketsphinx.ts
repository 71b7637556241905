// Offline speech to text with the Debian pocketsphinx (`pocketsphinx`,
// `pocketsphinx-en-us`): one utterance at a time, cut by our voice activity
// detector (streaming = false). Measurements and choices:
// docs/decisions/offline-speech.md.
//
// With expected phrases (sandbox scripts) each utterance is decoded twice, in
// parallel child processes: with a trigram model of the phrases plus common
// "garbage" words (speech off the script becomes a jumble that matches no
// line), and with a JSGF grammar of the phrases (which always picks a line).
// The model's words pick the line when they match it well; a weaker match is
// accepted only when the grammar chose the same line. Anything else is empty
// text. Without phrases (web calls) it spots the words the dialogue engine
// acts on (KEYWORDS) with the same kind of model.
//
// One `pocketsphinx_batch` process per decode: with a dictionary of only the
// needed words it starts in about 20 ms of CPU, holds no state between
// utterances and cannot leak a stuck decoder into the next turn.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { encodeWav, resample } from '../../lib/audio.js';
import { Slots } from '../../lib/slots.js';
import { ProviderFailure } from '../failure.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';
import { buildArpa, GARBAGE_WORDS, KEYWORD_GARBAGE_MASS, matchPhrase, SCRIPT_GARBAGE_MASS, wordsOf } from './pocketsphinx-model.js';

export const POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
const BINARY = 'pocketsphinx_batch';

/** What the sandbox dialogue engine acts on: spotted when a call has no script (web calls). */
export const KEYWORDS = ['opening hours', 'meeting', 'book', 'person', 'human', 'goodbye', 'bye', 'yes', 'no', 'thank you'];

/**
 * Decoder options for phone audio (8 kHz μ-law upsampled to 16 kHz for the
 * 16 kHz en-us model): noise removal off (it eats the quiet phone band), wide
 * beams, and filters only up to 3.8 kHz, where the phone band ends.
 */
const DECODER_OPTIONS = ['-remove_noise', 'no', '-beam', '1e-80', '-wbeam', '1e-60', '-pbeam', '1e-80', '-upperf', '3800'];
/**
 * Browser calls bring 16 kHz audio, the model's own rate: no upsampling and
 * the whole band (no -upperf). Noise removal stays off, as on the phone: on
 * flite's voices it turned "hello, who is this" into "no book …" (measured,
 * docs/decisions/offline-speech.md "Web calls").
 */
const WIDEBAND_DECODER_OPTIONS = ['-remove_noise', 'no', '-beam', '1e-80', '-wbeam', '1e-60', '-pbeam', '1e-80'];
/** Silence added around each utterance: the decoder needs some to settle its cepstral mean and end its last word. */
const PAD_MS = 300;
/** Line accepted from the model's words alone at this confidence; from model and grammar together at GRAMMAR_AGREEMENT. */
const MATCH_THRESHOLD = 0.5;
const GRAMMAR_AGREEMENT = 0.25;
/** An utterance quieter than this (RMS of PCM16) is silence: no decoder runs. */
const SILENCE_RMS = 60;
/** Audio kept of one utterance: its last 30 s (a caller who never pauses cannot grow a call's memory without end). */
export const MAX_UTTERANCE_MS = 30_000;
/** Utterances of one call waiting for a decoder; a call that cuts more (noise the VAD keeps cutting) gets empty results for them, so it cannot hold the decoders every call shares. */
export const MAX_WAITING_UTTERANCES = 8;

export interface PocketsphinxOptions {
  modelDir?: string;
  /** Decoder processes at once for this provider (default 2); more utterances wait their turn. */
  concurrency?: number;
  /** Longest one decode may take (default 20 s); then the process is killed and the stream fails. */
  timeoutMs?: number;
  /** Where the binary is looked up (default PATH). */
  path?: string;
}

/** true when `pocketsphinx_batch` is on the PATH and the en-us model is where Debian puts it. */
export function isPocketsphinxInstalled(options: Pick<PocketsphinxOptions, 'modelDir' | 'path'> = {}): boolean {
  const modelDir = options.modelDir ?? POCKETSPHINX_MODEL_DIR;
  const files = [join(modelDir, 'en-us', 'mdef'), join(modelDir, 'cmudict-en-us.dict')];
  return findBinary(BINARY, options.path) !== null && files.every((f) => existsSync(f));
}

/** The full path of an executable on the PATH, or null. */
export function findBinary(name: string, path = process.env.PATH ?? ''): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

/** The provider when pocketsphinx is installed, else null (callers fall back, DESIGN.md "Sandbox carrier"). */
export function createPocketsphinxSpeechToText(options: PocketsphinxOptions = {}): PocketsphinxSpeechToText | null {
  return isPocketsphinxInstalled(options) ? new PocketsphinxSpeechToText(options) : null;
}

/** Outcome of one utterance, with what was decoded (for logs and measurements). */
export interface UtteranceRecognition {
  text: string;
  confidence: number;
  /** Words the n-gram model decoded; the grammar's line when it ran. */
  decoded: string;
  grammar?: string;
  /** From the end of the utterance to its result, waiting for a decoder slot included. */
  wallMs: number;
}

export class PocketsphinxSpeechToText implements SpeechToText {
  readonly name = 'pocketsphinx';
  readonly streaming = false;
  readonly wideband = true;
  private readonly modelDir: string;
  private readonly slots: Slots;
  private readonly timeoutMs: number;
  private readonly binary: string;
  private dictionary: Promise<Map<string, string[]>> | null = null;

  constructor(options: PocketsphinxOptions = {}) {
    this.modelDir = options.modelDir ?? POCKETSPHINX_MODEL_DIR;
    this.slots = new Slots(options.concurrency ?? 2);
    this.timeoutMs = options.timeoutMs ?? 20_000;
    this.binary = findBinary(BINARY, options.path) ?? BINARY;
  }

  open(options: RecognitionOptions): RecognitionStream {
    return new PocketsphinxStream(this, options);
  }

  /** Builds what a call decodes with (model, grammar, dictionary) in a fresh temporary directory. */
  async prepare(phrases: string[] | undefined): Promise<PreparedSearch> {
    const dictionary = await this.loadDictionary();
    const known = (w: string) => dictionary.has(w);
    const scripted = (phrases ?? []).map((text) => ({ text, words: wordsOf(text).filter(known) })).filter((p) => p.words.length > 0);
    const keywordMode = scripted.length === 0;
    const targets = keywordMode ? KEYWORDS.map((text) => ({ text, words: wordsOf(text) })) : scripted;
    const dir = await mkdtemp(join(tmpdir(), 'pocketsphinx-'));
    const vocabulary = new Set([...targets.flatMap((t) => t.words), ...GARBAGE_WORDS.filter(known)]);
    const dict = [...vocabulary].flatMap((w) => dictionary.get(w) ?? []).join('\n');
    await writeFile(join(dir, 'words.dict'), `${dict}\n`);
    await writeFile(join(dir, 'model.arpa'), buildArpa(targets.map((t) => t.words), GARBAGE_WORDS, known, keywordMode ? KEYWORD_GARBAGE_MASS : SCRIPT_GARBAGE_MASS));
    if (!keywordMode) {
      const alternatives = targets.map((t) => t.words.join(' ')).join(' | ');
      await writeFile(join(dir, 'lines.jsgf'), `#JSGF V1.0;\ngrammar lines;\npublic <line> = ${alternatives};\n`);
    }
    return { dir, targets, keywordMode };
  }

  /** Recognises one utterance of PCM16 mono (8 kHz: the phone; 16 kHz: a browser) against a prepared search. */
  async recognise(search: PreparedSearch, id: number, pcm: Int16Array, signal: AbortSignal, sampleRate: 8000 | 16000 = 8000): Promise<UtteranceRecognition> {
    const started = performance.now();
    if (rms(pcm) < SILENCE_RMS) return { text: '', confidence: 0, decoded: '', wallMs: 0 };
    const pad = new Int16Array((16_000 * PAD_MS) / 1000);
    const speech = resample(pcm, sampleRate, 16_000);
    const options = sampleRate === 16_000 ? WIDEBAND_DECODER_OPTIONS : DECODER_OPTIONS;
    const padded = new Int16Array(pad.length * 2 + speech.length);
    padded.set(speech, pad.length);
    const name = `u${id}`;
    await writeFile(join(search.dir, `${name}.wav`), encodeWav(padded, 16_000));
    await writeFile(join(search.dir, `${name}.ctl`), `${name}\n`);
    try {
      const model = this.decode(search, name, ['-lm', join(search.dir, 'model.arpa'), ...options], 'lm', signal);
      const grammar = search.keywordMode ? null : this.decode(search, name, ['-jsgf', join(search.dir, 'lines.jsgf'), ...options], 'jsgf', signal);
      const [lm, jsgf] = await Promise.all([model, grammar]);
      const decoded = wordsOf(lm.text);
      const wallMs = Math.round(performance.now() - started);
      if (search.keywordMode) {
        const spotted = spotKeywords(decoded, search.targets);
        return { text: spotted.join(' '), confidence: spotted.length > 0 ? 1 - (decoded.length - spotted.join(' ').split(' ').length) / decoded.length : 0, decoded: lm.text, wallMs };
      }
      const lines = search.targets.map((t) => t.words);
      const chosen = decideLine(decoded, lines, jsgf ? wordsOf(jsgf.text) : []);
      return { text: chosen.index >= 0 ? search.targets[chosen.index]!.text : '', confidence: chosen.confidence, decoded: lm.text, grammar: jsgf?.text, wallMs };
    } finally {
      await Promise.all([`${name}.wav`, `${name}.ctl`, `${name}.lm.hyp`, `${name}.jsgf.hyp`].map((f) => rm(join(search.dir, f), { force: true })));
    }
  }

  private async decode(search: PreparedSearch, name: string, searchArgs: string[], kind: string, signal: AbortSignal): Promise<{ text: string }> {
    const release = await this.slots.acquire();
    try {
      signal.throwIfAborted();
      const hyp = join(search.dir, `${name}.${kind}.hyp`);
      const args = [
        '-hmm', join(this.modelDir, 'en-us'),
        '-dict', join(search.dir, 'words.dict'),
        ...searchArgs,
        '-adcin', 'yes', '-adchdr', '44', '-cepdir', search.dir, '-cepext', '.wav',
        '-ctl', join(search.dir, `${name}.ctl`), '-hyp', hyp, '-logfn', '/dev/null',
      ];
      await new Promise<void>((resolve, reject) => {
        execFile(this.binary, args, { timeout: this.timeoutMs, signal, killSignal: 'SIGKILL' }, (err, _stdout, stderr) => {
          if (err) reject(new ProviderFailure('pocketsphinx', err.killed ? `decoding took longer than ${this.timeoutMs} ms` : `decoder failed: ${String(stderr).trim().slice(-200) || err.message}`));
          else resolve();
        });
      });
      // "words (uttid score)": the words are everything before the last parenthesis.
      const line = (await readFile(hyp, 'utf8')).trim();
      const text = line.replace(/\s*\([^()]*\)\s*$/, '').replace(/\(\d+\)/g, '');
      return { text };
    } finally {
      release();
    }
  }

  private loadDictionary(): Promise<Map<string, string[]>> {
    this.dictionary ??= readFile(join(this.modelDir, 'cmudict-en-us.dict'), 'utf8').then((text) => {
      const entries = new Map<string, string[]>();
      for (const line of text.split('\n')) {
        const space = line.indexOf(' ');
        if (space <= 0) continue;
        const word = line.slice(0, space).replace(/\(\d+\)$/, '');
        const list = entries.get(word);
        if (list) list.push(line);
        else entries.set(word, [line]);
      }
      return entries;
    });
    this.dictionary.catch(() => {
      this.dictionary = null;
    });
    return this.dictionary;
  }
}

export interface PreparedSearch {
  dir: string;
  targets: Array<{ text: string; words: string[] }>;
  keywordMode: boolean;
}

/**
 * The expected line for an utterance: the model's words alone when they match
 * a line well (≥ MATCH_THRESHOLD); else the grammar's line when the model's
 * words agree with it at least a little (≥ GRAMMAR_AGREEMENT); else none.
 */
export function decideLine(decoded: string[], lines: string[][], grammar: string[]): { index: number; confidence: number } {
  const direct = matchPhrase(decoded, lines, MATCH_THRESHOLD);
  if (direct.index >= 0) return direct;
  const grammarLine = grammar.length > 0 ? lines.findIndex((l) => l.join(' ') === grammar.join(' ')) : -1;
  if (grammarLine < 0) return { index: -1, confidence: direct.confidence };
  const agreement = matchPhrase(decoded, [lines[grammarLine]!], GRAMMAR_AGREEMENT);
  return agreement.index === 0 ? { index: grammarLine, confidence: agreement.confidence } : { index: -1, confidence: direct.confidence };
}

/** The keyword phrases that occur, word for word and in order, in the decoded words. */
export function spotKeywords(decoded: string[], keywords: Array<{ text: string; words: string[] }>): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < decoded.length) {
    const hit = keywords.filter((k) => k.words.every((w, j) => decoded[i + j] === w)).sort((a, b) => b.words.length - a.words.length)[0];
    if (hit) {
      found.push(hit.text);
      i += hit.words.length;
    } else i++;
  }
  return found;
}

function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length);
}

/** One call's recognition: audio gathered per utterance, each recognised in order, results in order. */
class PocketsphinxStream implements RecognitionStream {
  private chunks: Int16Array[] = [];
  private samples = 0;
  private offsetSamples = 0;
  private utterances = 0;
  private readonly sampleRate: 8000 | 16000;
  private readonly pending: Array<Promise<RecognitionResult>> = [];
  /** Utterances sent to the decoder and not yet recognised. */
  private waiting = 0;
  private wake: (() => void) | null = null;
  private closed = false;
  private readonly controller = new AbortController();
  private search: Promise<PreparedSearch> | null = null;

  constructor(
    private readonly provider: PocketsphinxSpeechToText,
    private readonly options: RecognitionOptions,
  ) {
    this.sampleRate = options.sampleRate ?? 8000;
    options.signal.addEventListener('abort', () => void this.close(), { once: true });
  }

  write(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    this.chunks.push(pcm.slice());
    this.samples += pcm.length;
    // Past the longest utterance kept, its oldest audio goes (the utterance then starts that much later).
    const max = (MAX_UTTERANCE_MS * this.sampleRate) / 1000;
    while (this.samples > max && this.chunks.length > 1) {
      const oldest = this.chunks.shift()!;
      this.samples -= oldest.length;
      this.offsetSamples += oldest.length;
    }
  }

  endUtterance(): void {
    if (this.closed) return;
    const audio = new Int16Array(this.samples);
    let at = 0;
    for (const c of this.chunks) {
      audio.set(c, at);
      at += c.length;
    }
    const startMs = Math.round((this.offsetSamples * 1000) / this.sampleRate);
    this.offsetSamples += this.samples;
    const endMs = Math.round((this.offsetSamples * 1000) / this.sampleRate);
    this.chunks = [];
    this.samples = 0;
    const id = ++this.utterances;
    if (this.waiting >= MAX_WAITING_UTTERANCES) {
      this.pending.push(Promise.resolve({ text: '', final: true, startMs, endMs }));
      this.wake?.();
      return;
    }
    this.waiting++;
    this.search ??= this.provider.prepare(this.options.phrases);
    const result = this.search
      .then((search) => this.provider.recognise(search, id, audio, this.controller.signal, this.sampleRate))
      .then((r): RecognitionResult => ({ text: r.text, final: true, startMs, endMs, confidence: r.confidence }))
      .catch((err: unknown) => {
        throw err instanceof ProviderFailure ? err : new ProviderFailure('pocketsphinx', err instanceof Error ? err.message : String(err));
      })
      .finally(() => this.waiting--);
    result.catch(() => {}); // observed by the reader; never an unhandled rejection
    this.pending.push(result);
    this.wake?.();
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
    this.pending.length = 0;
    this.wake?.();
    const search = this.search;
    if (search) await search.then((s) => rm(s.dir, { recursive: true, force: true })).catch(() => {});
  }
}
