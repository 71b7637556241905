// Offline speech to text with the Debian pocketsphinx (`pocketsphinx`,
// `pocketsphinx-en-us`): one utterance at a time, cut by our voice activity
// detector (streaming = false), decoded while the caller speaks
// (pocketsphinx-stream.ts, pocketsphinx-live.ts). Measurements and choices:
// docs/decisions/offline-speech.md.
//
// With expected phrases (sandbox scripts) an utterance is decoded with a
// trigram model of the phrases plus common "garbage" words (speech off the
// script becomes a jumble that matches no line), and, when its words alone
// match no line well, with a JSGF grammar of the phrases (which always picks a
// line). The model's words pick the line when they match it well; a weaker
// match is accepted only when the grammar chose the same line. Anything else
// is empty text. Without phrases (web calls) it spots the words the dialogue
// engine acts on (KEYWORDS) with the same kind of model.
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
import type { RecognitionOptions, RecognitionStream, SpeechToText } from './interface.js';
import { LIVE_FILES, LiveDecoder, PHONE_CMN_INIT, WIDEBAND_CMN_INIT } from './pocketsphinx-live.js';
import {
  buildArpa,
  GARBAGE_WORDS,
  KEYWORD_GARBAGE_MASS,
  matchPhrase,
  SCRIPT_GARBAGE_MASS,
  wordsOf,
} from './pocketsphinx-model.js';
import { PocketsphinxStream } from './pocketsphinx-stream.js';
import type { PocketsphinxEngine, PreparedSearch, UtteranceRecognition } from './pocketsphinx-types.js';

export type { PreparedSearch, UtteranceRecognition } from './pocketsphinx-types.js';

export { MAX_UTTERANCE_MS, MAX_WAITING_UTTERANCES } from './pocketsphinx-stream.js';

export const POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
const BINARY = 'pocketsphinx_batch';

/** What the sandbox dialogue engine acts on: spotted when a call has no script (web calls). */
export const KEYWORDS = [
  'opening hours',
  'meeting',
  'book',
  'person',
  'human',
  'goodbye',
  'bye',
  'yes',
  'no',
  'thank you',
];

/**
 * What callers say before a keyword, in the keyword model with a keyword's
 * weight: never spotted, and not counted against the keywords' confidence.
 * Without them "I would like to book a meeting" had only keywords to go to
 * ("bye would like to bye bye meeting", flite) and the engine heard goodbye.
 */
export const KEYWORD_CARRIERS = ['i would like to', 'i want to'];

/**
 * Keyword spotting's confidence (the share of the decoded words that are
 * keywords) below which a result is not acted on. Measured on flite and
 * espeak-ng questions: real keywords 0.22-0.6 ("opening hours" in a whole
 * question 0.25), keywords heard in sentences holding none 0.13-0.18, "bye"
 * in sound with no words 0.2. Lines the decoder matched to a script are not
 * judged by it.
 */
export const KEYWORD_SPOTTING_MIN_CONFIDENCE = 0.25;

/**
 * Decoder options for phone audio (8 kHz μ-law upsampled to 16 kHz for the
 * 16 kHz en-us model): noise removal off (it eats the quiet phone band), wide
 * beams, and filters only up to 3.8 kHz, where the phone band ends.
 */
const DECODER_OPTIONS = [
  '-remove_noise',
  'no',
  '-beam',
  '1e-80',
  '-wbeam',
  '1e-60',
  '-pbeam',
  '1e-80',
  '-upperf',
  '3800',
];
/**
 * Browser calls bring 16 kHz audio, the model's own rate: no upsampling and
 * the whole band (no -upperf). Noise removal stays off, as on the phone: on
 * flite's voices it turned "hello, who is this" into "no book …" (measured,
 * docs/decisions/offline-speech.md "Web calls").
 */
const WIDEBAND_DECODER_OPTIONS = ['-remove_noise', 'no', '-beam', '1e-80', '-wbeam', '1e-60', '-pbeam', '1e-80'];
/** Silence added around each utterance: the decoder needs some to settle its cepstral mean and end its last word. */
export const PAD_MS = 300;
/** Line accepted from the model's words alone at this confidence; from model and grammar together at GRAMMAR_AGREEMENT. */
const MATCH_THRESHOLD = 0.5;
const GRAMMAR_AGREEMENT = 0.25;
/** An utterance quieter than this (RMS of PCM16) is silence: no decoder runs (a live one is stopped). */
export const SILENCE_RMS = 60;

export interface PocketsphinxOptions {
  modelDir?: string;
  /** Decoder processes at once for this provider after a cut (grammar passes, whole-utterance decodes; default 2); more wait their turn. */
  concurrency?: number;
  /** Calls decoding as their caller speaks at once (one process each; default 32); another call's utterance waits for one and is then fed what it missed. */
  liveDecoders?: number;
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

export class PocketsphinxSpeechToText implements SpeechToText, PocketsphinxEngine {
  readonly name = 'pocketsphinx';
  readonly streaming = false;
  readonly wideband = true;
  private readonly modelDir: string;
  private readonly slots: Slots;
  /** Live decoders of all calls (each stream runs at most one at a time). */
  readonly liveSlots: Slots;
  readonly timeoutMs: number;
  private readonly binary: string;
  private dictionary: Promise<Map<string, string[]>> | null = null;

  constructor(options: PocketsphinxOptions = {}) {
    this.modelDir = options.modelDir ?? POCKETSPHINX_MODEL_DIR;
    this.slots = new Slots(options.concurrency ?? 2);
    this.liveSlots = new Slots(options.liveDecoders ?? 32);
    this.timeoutMs = options.timeoutMs ?? 20_000;
    this.binary = findBinary(BINARY, options.path) ?? BINARY;
  }

  open(options: RecognitionOptions): RecognitionStream {
    return new PocketsphinxStream(this, options);
  }

  /** Keyword spotting (a call with no phrases) says how sure it is; a script's line is chosen by its own thresholds. */
  minConfidence(phrases: string[] | undefined): number | undefined {
    return phrases?.some((p) => wordsOf(p).length > 0) ? undefined : KEYWORD_SPOTTING_MIN_CONFIDENCE;
  }

  /** 16 kHz samples of silence a decoder hears before and after an utterance. */
  readonly padSamples = (16_000 * PAD_MS) / 1000;

  /** Quieter than SILENCE_RMS: no decoder is needed to know there are no words. */
  isSilent(pcm: Int16Array): boolean {
    return rms(pcm) < SILENCE_RMS;
  }

  /** Deletes a call's directory (its model, grammar, FIFO and leftovers). */
  async removeSearch(search: PreparedSearch): Promise<void> {
    await rm(search.dir, { recursive: true, force: true });
  }

  /** Builds what a call decodes with (model, grammar, dictionary) in a fresh temporary directory. */
  async prepare(phrases: string[] | undefined): Promise<PreparedSearch> {
    const dictionary = await this.loadDictionary();
    const known = (w: string) => dictionary.has(w);
    const scripted = (phrases ?? [])
      .map((text) => ({ text, words: wordsOf(text).filter(known) }))
      .filter((p) => p.words.length > 0);
    const keywordMode = scripted.length === 0;
    const targets = keywordMode ? KEYWORDS.map((text) => ({ text, words: wordsOf(text) })) : scripted;
    const dir = await mkdtemp(join(tmpdir(), 'pocketsphinx-'));
    const vocabulary = new Set([
      ...targets.flatMap((t) => t.words),
      ...(keywordMode ? KEYWORD_CARRIERS.flatMap(wordsOf) : []),
      ...GARBAGE_WORDS.filter(known),
    ]);
    const dict = [...vocabulary].flatMap((w) => dictionary.get(w) ?? []).join('\n');
    await writeFile(join(dir, 'words.dict'), `${dict}\n`);
    await writeFile(
      join(dir, 'model.arpa'),
      buildArpa(
        [...targets.map((t) => t.words), ...(keywordMode ? KEYWORD_CARRIERS.map(wordsOf) : [])],
        GARBAGE_WORDS,
        known,
        keywordMode ? KEYWORD_GARBAGE_MASS : SCRIPT_GARBAGE_MASS,
      ),
    );
    if (!keywordMode) {
      const alternatives = targets.map((t) => t.words.join(' ')).join(' | ');
      await writeFile(join(dir, 'lines.jsgf'), `#JSGF V1.0;\ngrammar lines;\npublic <line> = ${alternatives};\n`);
    }
    // The live decoder's input: a FIFO the ctl file names (pocketsphinx-live.ts).
    await writeFile(join(dir, LIVE_FILES.ctl), 'live\n');
    await new Promise<void>((resolve, reject) =>
      execFile('mkfifo', ['-m', '600', join(dir, LIVE_FILES.fifo)], (err) =>
        err ? reject(new ProviderFailure('pocketsphinx', `mkfifo failed: ${err.message}`)) : resolve(),
      ),
    );
    return { dir, targets, keywordMode };
  }

  /** A decoder of the model pass fed while the caller speaks (the caller holds a liveSlots slot for it). */
  startLive(search: PreparedSearch, sampleRate: 8000 | 16000, cmnInit: string | null): Promise<LiveDecoder> {
    const options = sampleRate === 16_000 ? WIDEBAND_DECODER_OPTIONS : DECODER_OPTIONS;
    return LiveDecoder.start({
      binary: this.binary,
      modelDir: this.modelDir,
      dir: search.dir,
      args: ['-lm', join(search.dir, 'model.arpa'), ...options],
      sampleRate,
      cmnInit: cmnInit ?? (sampleRate === 16_000 ? WIDEBAND_CMN_INIT : PHONE_CMN_INIT),
    });
  }

  /**
   * The result of an utterance from the model's words: keywords spotted, or
   * the line decided; the grammar pass (on the utterance's audio, after the
   * cut) runs only when the words alone match no line well, where decideLine
   * would consult it.
   */
  async conclude(
    search: PreparedSearch,
    id: number,
    modelText: string,
    pcm: Int16Array,
    signal: AbortSignal,
    sampleRate: 8000 | 16000 = 8000,
  ): Promise<UtteranceRecognition> {
    const started = performance.now();
    const decoded = wordsOf(modelText);
    if (search.keywordMode) return { ...keywordResult(decoded, search.targets), decoded: modelText, wallMs: 0 };
    const lines = search.targets.map((t) => t.words);
    if (matchPhrase(decoded, lines, MATCH_THRESHOLD).index >= 0)
      return { ...lineResult(search, decideLine(decoded, lines, [])), decoded: modelText, wallMs: 0 };
    const name = `g${id}`;
    await this.writeUtterance(search, name, pcm, sampleRate);
    try {
      const options = sampleRate === 16_000 ? WIDEBAND_DECODER_OPTIONS : DECODER_OPTIONS;
      const jsgf = await this.decode(
        search,
        name,
        ['-jsgf', join(search.dir, 'lines.jsgf'), ...options],
        'jsgf',
        signal,
      );
      return {
        ...lineResult(search, decideLine(decoded, lines, wordsOf(jsgf.text))),
        decoded: modelText,
        grammar: jsgf.text,
        wallMs: Math.round(performance.now() - started),
      };
    } finally {
      await this.removeUtterance(search, name);
    }
  }

  /**
   * Recognises one whole utterance of PCM16 mono (8 kHz: the phone; 16 kHz: a
   * browser) against a prepared search, both passes at once: for an utterance
   * the live decoder could not take (longer than MAX_UTTERANCE_MS, a decoder
   * that fell behind).
   */
  async recognise(
    search: PreparedSearch,
    id: number,
    pcm: Int16Array,
    signal: AbortSignal,
    sampleRate: 8000 | 16000 = 8000,
  ): Promise<UtteranceRecognition> {
    const started = performance.now();
    if (rms(pcm) < SILENCE_RMS) return { text: '', confidence: 0, decoded: '', wallMs: 0 };
    const options = sampleRate === 16_000 ? WIDEBAND_DECODER_OPTIONS : DECODER_OPTIONS;
    const name = `u${id}`;
    await this.writeUtterance(search, name, pcm, sampleRate);
    try {
      const model = this.decode(search, name, ['-lm', join(search.dir, 'model.arpa'), ...options], 'lm', signal);
      const grammar = search.keywordMode
        ? null
        : this.decode(search, name, ['-jsgf', join(search.dir, 'lines.jsgf'), ...options], 'jsgf', signal);
      const [lm, jsgf] = await Promise.all([model, grammar]);
      const decoded = wordsOf(lm.text);
      const wallMs = Math.round(performance.now() - started);
      if (search.keywordMode) return { ...keywordResult(decoded, search.targets), decoded: lm.text, wallMs };
      const lines = search.targets.map((t) => t.words);
      return {
        ...lineResult(search, decideLine(decoded, lines, jsgf ? wordsOf(jsgf.text) : [])),
        decoded: lm.text,
        grammar: jsgf?.text,
        wallMs,
      };
    } finally {
      await this.removeUtterance(search, name);
    }
  }

  /** The utterance as the batch decoder reads it: 16 kHz, PAD_MS of silence around it, a WAV and a ctl line. */
  private async writeUtterance(search: PreparedSearch, name: string, pcm: Int16Array, sampleRate: 8000 | 16000) {
    const pad = new Int16Array((16_000 * PAD_MS) / 1000);
    const speech = resample(pcm, sampleRate, 16_000);
    const padded = new Int16Array(pad.length * 2 + speech.length);
    padded.set(speech, pad.length);
    await writeFile(join(search.dir, `${name}.wav`), encodeWav(padded, 16_000));
    await writeFile(join(search.dir, `${name}.ctl`), `${name}\n`);
  }

  private async removeUtterance(search: PreparedSearch, name: string) {
    await Promise.all(
      [`${name}.wav`, `${name}.ctl`, `${name}.lm.hyp`, `${name}.jsgf.hyp`].map((f) =>
        rm(join(search.dir, f), { force: true }),
      ),
    );
  }

  private async decode(
    search: PreparedSearch,
    name: string,
    searchArgs: string[],
    kind: string,
    signal: AbortSignal,
  ): Promise<{ text: string }> {
    const release = await this.slots.acquire();
    try {
      signal.throwIfAborted();
      const hyp = join(search.dir, `${name}.${kind}.hyp`);
      const args = [
        '-hmm',
        join(this.modelDir, 'en-us'),
        '-dict',
        join(search.dir, 'words.dict'),
        ...searchArgs,
        '-adcin',
        'yes',
        '-adchdr',
        '44',
        '-cepdir',
        search.dir,
        '-cepext',
        '.wav',
        '-ctl',
        join(search.dir, `${name}.ctl`),
        '-hyp',
        hyp,
        '-logfn',
        '/dev/null',
      ];
      await new Promise<void>((resolve, reject) => {
        execFile(
          this.binary,
          args,
          { timeout: this.timeoutMs, signal, killSignal: 'SIGKILL' },
          (err, _stdout, stderr) => {
            if (err)
              reject(
                new ProviderFailure(
                  'pocketsphinx',
                  err.killed
                    ? `decoding took longer than ${this.timeoutMs} ms`
                    : `decoder failed: ${String(stderr).trim().slice(-200) || err.message}`,
                ),
              );
            else resolve();
          },
        );
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

/**
 * The expected line for an utterance: the model's words alone when they match
 * a line well (≥ MATCH_THRESHOLD); else the grammar's line when the model's
 * words agree with it at least a little (≥ GRAMMAR_AGREEMENT); else none.
 */
export function decideLine(
  decoded: string[],
  lines: string[][],
  grammar: string[],
): { index: number; confidence: number } {
  const direct = matchPhrase(decoded, lines, MATCH_THRESHOLD);
  if (direct.index >= 0) return direct;
  const grammarLine = grammar.length > 0 ? lines.findIndex((l) => l.join(' ') === grammar.join(' ')) : -1;
  if (grammarLine < 0) return { index: -1, confidence: direct.confidence };
  const agreement = matchPhrase(decoded, [lines[grammarLine]!], GRAMMAR_AGREEMENT);
  return agreement.index === 0
    ? { index: grammarLine, confidence: agreement.confidence }
    : { index: -1, confidence: direct.confidence };
}

const CARRIER_TARGETS = KEYWORD_CARRIERS.map((text) => ({ text, words: wordsOf(text) }));

/**
 * Keyword mode's result: the keywords found; confidence the share of the
 * decoded words that are keywords, the carriers (KEYWORD_CARRIERS) left out.
 */
export function keywordResult(
  decoded: string[],
  targets: PreparedSearch['targets'],
): { text: string; confidence: number } {
  const spotted = spotKeywords(decoded, targets);
  const carried = spotKeywords(decoded, CARRIER_TARGETS).reduce((n, c) => n + wordsOf(c).length, 0);
  const words = decoded.length - carried;
  const keywordWords = spotted.reduce((n, k) => n + wordsOf(k).length, 0);
  return { text: spotted.join(' '), confidence: spotted.length > 0 && words > 0 ? keywordWords / words : 0 };
}

function lineResult(
  search: PreparedSearch,
  chosen: { index: number; confidence: number },
): { text: string; confidence: number } {
  return { text: chosen.index >= 0 ? search.targets[chosen.index]!.text : '', confidence: chosen.confidence };
}

/** The keyword phrases that occur, word for word and in order, in the decoded words. */
export function spotKeywords(decoded: string[], keywords: Array<{ text: string; words: string[] }>): string[] {
  const found: string[] = [];
  let i = 0;
  while (i < decoded.length) {
    const hit = keywords
      .filter((k) => k.words.every((w, j) => decoded[i + j] === w))
      .sort((a, b) => b.words.length - a.words.length)[0];
    if (hit) {
      found.push(hit.text);
      i += hit.words.length;
    } else i++;
  }
  return found;
}

export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / samples.length);
}
