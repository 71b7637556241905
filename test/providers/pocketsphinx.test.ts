// Offline recognition on the phone path: a line spoken by flite (or
// espeak-ng), cut to 8 kHz μ-law and back as Twilio would carry it, written in
// 20 ms frames, recognised by the Debian pocketsphinx against the script.
// Skipped only when pocketsphinx or the synthesisers are not installed.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { FRAME_SAMPLES_8K, mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import { installedCallerSynthesizers, OfflineCallerVoice } from '../../src/providers/call-speech/offline-caller.js';
import { ProviderFailure } from '../../src/providers/failure.js';
import type { RecognitionResult } from '../../src/providers/speech-to-text/interface.js';
import {
  createPocketsphinxSpeechToText,
  decideLine,
  isPocketsphinxInstalled,
  KEYWORD_SPOTTING_MIN_CONFIDENCE,
  KEYWORDS,
  keywordResult,
  PocketsphinxSpeechToText,
  spotKeywords,
} from '../../src/providers/speech-to-text/pocketsphinx.js';
import { buildArpa, matchPhrase, wordsOf } from '../../src/providers/speech-to-text/pocketsphinx-model.js';
import { classify } from '../../src/providers/language-model/sandbox.js';
import { until } from '../support/voice-audio.js';

const DEFAULT_SCRIPT = [
  'Hello, who is this?',
  'Can you tell me your opening hours please?',
  'I would like to book a meeting for next Tuesday.',
  'No thank you, goodbye.',
];

const hasPocketsphinx = isPocketsphinxInstalled();
const synthesizers = installedCallerSynthesizers();
if (!hasPocketsphinx)
  console.warn(
    'pocketsphinx tests skipped: pocketsphinx_batch or /usr/share/pocketsphinx/model/en-us is missing (apt-get install pocketsphinx pocketsphinx-en-us)',
  );
if (!synthesizers.includes('flite'))
  console.warn('flite tests skipped: flite is not installed (apt-get install flite)');
if (!synthesizers.includes('espeak-ng'))
  console.warn('espeak-ng caller tests skipped: espeak-ng is not installed (apt-get install espeak-ng)');
const canRecogniseFlite = hasPocketsphinx && synthesizers.includes('flite');
const canRecogniseEspeak = hasPocketsphinx && synthesizers.includes('espeak-ng');

/** What the far end hears: 8 kHz μ-law and back. */
const phonePath = (pcm8k: Int16Array) => mulawToPcm(pcmToMulaw(pcm8k));

const controllers: AbortController[] = [];
afterAll(() => controllers.forEach((c) => c.abort()));

/** Writes each utterance in 20 ms frames, cuts it, and collects one result per utterance. */
async function recognise(
  stt: PocketsphinxSpeechToText,
  utterances: Int16Array[],
  phrases?: string[],
  sampleRate: 8000 | 16000 = 8000,
): Promise<RecognitionResult[]> {
  const controller = new AbortController();
  controllers.push(controller);
  const stream = stt.open({ signal: controller.signal, phrases, ...(sampleRate === 16000 ? { sampleRate } : {}) });
  const frame = (FRAME_SAMPLES_8K * sampleRate) / 8000;
  for (const audio of utterances) {
    // The whole line is the utterance (the VAD's start and end of speech at its edges): decoded as it is written.
    stream.startUtterance();
    for (let at = 0; at < audio.length; at += frame) stream.write(audio.subarray(at, at + frame));
    stream.endUtterance();
  }
  const results: RecognitionResult[] = [];
  try {
    for await (const result of stream.results) {
      results.push(result);
      if (results.length === utterances.length) break;
    }
  } finally {
    await stream.close();
  }
  return results;
}

/** CPU time (ms) of this process's finished children, from /proc. */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** pocketsphinx_batch processes that are children of this process, from /proc. */
function runningDecoders(): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm.startsWith('pocketsphinx_ba') && ppid === process.pid) count++;
    } catch {
      // gone already
    }
  }
  return count;
}

async function speakAll(synthesizer: 'flite' | 'espeak-ng', lines: string[]): Promise<Int16Array[]> {
  const voice = OfflineCallerVoice.create({ synthesizer })!;
  return Promise.all(lines.map(async (line) => phonePath(await voice.speak(line, new AbortController().signal))));
}

describe('pocketsphinx models and matching (no decoder)', () => {
  it('writes an ARPA model whose n-gram counts match its sections and whose garbage words skip the script words', () => {
    const arpa = buildArpa(
      [wordsOf('No thank you, goodbye.'), wordsOf('Hello, who is this?')],
      ['the', 'thank', 'dog'],
      (w) => w !== 'dog',
    );
    const header = Object.fromEntries([...arpa.matchAll(/ngram (\d)=(\d+)/g)].map((m) => [m[1], Number(m[2])]));
    const section = (n: number) => arpa.split(`\\${n}-grams:\n`)[1]!.split('\n\n')[0]!.split('\n');
    for (const n of [1, 2, 3]) expect(section(n)).toHaveLength(header[n]);
    expect(section(1).map((l) => l.split(' ')[1])).toEqual(
      expect.arrayContaining(['no', 'thank', 'goodbye', 'hello', 'the', '</s>', '<s>']),
    );
    expect(arpa).not.toMatch(/ dog/); // not in the dictionary
    expect(section(1).filter((l) => l.split(' ')[1] === 'thank')).toHaveLength(1);
    // Probabilities after one history sum to at most 1 (discounted), each a log10 ≤ 0.
    expect(section(2).every((l) => Number(l.split(' ')[0]) <= 0)).toBe(true);
  });

  it('matches decoded words to the closest line, and refuses a jumble', () => {
    const lines = DEFAULT_SCRIPT.map(wordsOf);
    expect(matchPhrase(wordsOf('can you me your opening going please'), lines, 0.5)).toEqual({
      index: 1,
      confidence: 0.75,
    });
    expect(matchPhrase(wordsOf('purple well of thank them while please'), lines, 0.5).index).toBe(-1);
    expect(matchPhrase([], lines, 0.5)).toEqual({ index: -1, confidence: 0 });
    // The grammar's line is taken on weak evidence only when the model's words agree with it.
    expect(decideLine(wordsOf('hello me'), lines, wordsOf('hello who is this'))).toEqual({
      index: 0,
      confidence: 0.25,
    });
    expect(
      decideLine(wordsOf('purple hello thank them while please'), lines, wordsOf('no thank you goodbye')).index,
    ).toBe(-1);
    expect(decideLine(wordsOf('best'), lines, wordsOf('hello who is this')).index).toBe(-1);
  });

  it('spots keywords, longest first, in order', () => {
    const keywords = ['opening hours', 'meeting', 'book', 'bye', 'thank you'].map((text) => ({
      text,
      words: wordsOf(text),
    }));
    expect(spotKeywords(wordsOf('what are your opening hours thank you bye'), keywords)).toEqual([
      'opening hours',
      'thank you',
      'bye',
    ]);
    expect(spotKeywords(wordsOf('the opening of the door'), keywords)).toEqual([]);
  });

  it("scores keyword spotting without counting a caller's opening against it, and floors only keyword mode", () => {
    const targets = KEYWORDS.map((text) => ({ text, words: wordsOf(text) }));
    // "I would like to" is a carrier: the keywords are all the rest.
    expect(keywordResult(wordsOf('i would like to book meeting'), targets)).toEqual({
      text: 'book meeting',
      confidence: 1,
    });
    expect(keywordResult(wordsOf('can you tell me your opening hours please'), targets)).toEqual({
      text: 'opening hours',
      confidence: 0.25,
    });
    expect(keywordResult(wordsOf('purple well of that'), targets)).toEqual({ text: '', confidence: 0 });
    const stt = new PocketsphinxSpeechToText();
    expect(stt.minConfidence(undefined)).toBe(KEYWORD_SPOTTING_MIN_CONFIDENCE);
    expect(stt.minConfidence([])).toBe(KEYWORD_SPOTTING_MIN_CONFIDENCE);
    expect(stt.minConfidence(['Hello, who is this?'])).toBeUndefined();
  });

  it('says when pocketsphinx is not installed, and the factory gives no provider', () => {
    expect(isPocketsphinxInstalled({ path: '/nonexistent' })).toBe(false);
    expect(isPocketsphinxInstalled({ modelDir: '/nonexistent' })).toBe(false);
    expect(createPocketsphinxSpeechToText({ path: '/nonexistent' })).toBeNull();
  });
});

describe.skipIf(!canRecogniseFlite)('pocketsphinx on the phone path (flite caller)', () => {
  const stt = new PocketsphinxSpeechToText();

  it('recognises every line of the default script, in order, with times and confidence', async () => {
    const audio = await speakAll('flite', DEFAULT_SCRIPT);
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const results = await recognise(stt, audio, DEFAULT_SCRIPT);
    const wall = performance.now() - started;
    console.log(
      `flite, default script: ${results.map((r) => JSON.stringify(r.text)).join(', ')}; ${Math.round(wall / audio.length)} ms and ${Math.round((childrenCpuMs() - cpuBefore) / audio.length)} ms of decoder CPU per utterance`,
    );
    expect(results.map((r) => r.text)).toEqual(DEFAULT_SCRIPT);
    expect(results.every((r) => r.final && (r.confidence ?? 0) >= 0.5)).toBe(true);
    expect(results[0]!.startMs).toBe(0);
    for (let i = 1; i < results.length; i++) expect(results[i]!.startMs).toBe(results[i - 1]!.endMs);
    expect(results[3]!.endMs).toBe(Math.round((audio.reduce((n, a) => n + a.length, 0) * 1000) / 8000));
  }, 120_000);

  it('decodes as the caller speaks: a decoder runs before the cut, fed frame by frame; the result is the line', async () => {
    const audio = await speakAll('flite', DEFAULT_SCRIPT);
    const controller = new AbortController();
    controllers.push(controller);
    const stream = stt.open({ signal: controller.signal, phrases: DEFAULT_SCRIPT });
    const results = stream.results[Symbol.asyncIterator]();
    const afterCut: number[] = [];
    try {
      for (const [i, line] of audio.entries()) {
        stream.startUtterance();
        const half = Math.floor(line.length / 2 / FRAME_SAMPLES_8K) * FRAME_SAMPLES_8K;
        // The first half at 4× real time, then the line waits until its decoder is running, then the rest.
        for (let at = 0; at < half; at += FRAME_SAMPLES_8K) {
          stream.write(line.subarray(at, at + FRAME_SAMPLES_8K));
          if (at % (FRAME_SAMPLES_8K * 4) === 0) await new Promise((r) => setTimeout(r, 20));
        }
        await until(() => runningDecoders() === 1, 10_000, 'a decoder while the caller speaks');
        for (let at = half; at < line.length; at += FRAME_SAMPLES_8K)
          stream.write(line.subarray(at, at + FRAME_SAMPLES_8K));
        const cutAt = performance.now();
        stream.endUtterance();
        const { value } = await results.next();
        afterCut.push(Math.round(performance.now() - cutAt));
        expect(value).toMatchObject({ text: DEFAULT_SCRIPT[i], final: true });
      }
    } finally {
      await stream.close();
    }
    console.log(`flite, decoded as spoken: result ${afterCut.join(', ')} ms after each cut`);
    expect(runningDecoders()).toBe(0);
  }, 120_000);

  it('does not snap speech off the script onto a line', async () => {
    const [elephants, closing] = await speakAll('flite', [
      'Purple elephants dance quietly',
      'What time do you close today?',
    ]);
    const results = await recognise(stt, [elephants!, closing!], DEFAULT_SCRIPT);
    console.log(
      `flite, off the script: ${results.map((r) => `${JSON.stringify(r.text)} (${r.confidence?.toFixed(2)})`).join(', ')}`,
    );
    for (const r of results) expect(r.text).toBe('');
    for (const r of results) expect(r.confidence ?? 0).toBeLessThan(0.5);
  }, 120_000);

  it('answers silence and noise with empty text', async () => {
    const silence = new Int16Array(8000);
    let seed = 7;
    const noise = Int16Array.from({ length: 12_000 }, () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return ((seed / 0x7fffffff) * 2 - 1) * 3000;
    });
    const results = await recognise(stt, [phonePath(silence), phonePath(noise)], DEFAULT_SCRIPT);
    expect(results.map((r) => r.text)).toEqual(['', '']);
  }, 120_000);

  it('keeps only the last 30 s of an utterance that never ends: a caller who never pauses cannot grow the call without end', async () => {
    const [result] = await recognise(stt, [new Int16Array(60 * 8000)], DEFAULT_SCRIPT);
    expect(result).toMatchObject({ text: '', final: true, startMs: 30_000, endMs: 60_000 });
  }, 60_000);

  it('spots the words the dialogue engine acts on when the call has no script', async () => {
    const audio = await speakAll('flite', [
      'Can you tell me your opening hours please?',
      'I would like to book a meeting.',
      'No thank you, goodbye.',
      'Can I speak to a person?',
      'Purple elephants dance quietly',
    ]);
    const results = await recognise(stt, audio);
    console.log(`flite, keywords: ${results.map((r) => JSON.stringify(r.text)).join(', ')}`);
    expect(results[0]!.text).toContain('opening hours');
    expect(results[1]!.text).toMatch(/book|meeting/);
    expect(results[2]!.text).toContain('goodbye');
    expect(results[3]!.text).toBe('person');
    expect(results[4]!.text).toBe('');
  }, 120_000);

  it('hears no goodbye in "I would like to book a meeting": the keywords, through the engine, ask for a meeting or are unclear', async () => {
    // flite's slt at 16 kHz (a browser) was decoded "bye would like to bye bye meeting" (0.36), and the engine said goodbye.
    const line = 'I would like to book a meeting for next Tuesday.';
    const heardAs = (r: RecognitionResult) =>
      r.confidence !== undefined && r.confidence < stt.minConfidence(undefined)! ? 'unclear' : classify(r.text);
    const phone = await recognise(stt, await speakAll('flite', [line, 'I would like to book a meeting.']));
    const browser: RecognitionResult[] = [];
    for (const voice of ['slt', 'rms']) {
      const speaker = OfflineCallerVoice.create({ synthesizer: 'flite', voice })!;
      const audio = await Promise.all(
        [line, 'No thank you, goodbye.'].map((l) => speaker.speak(l, new AbortController().signal, 16_000)),
      );
      browser.push(...(await recognise(stt, audio, undefined, 16_000)));
    }
    console.log(
      `flite, a meeting asked for: ${[...phone, ...browser].map((r) => `${JSON.stringify(r.text)} ${r.confidence?.toFixed(2)}`).join(', ')}`,
    );
    for (const r of [...phone, browser[0]!, browser[2]!]) expect(['meeting', 'unclear']).toContain(heardAs(r));
    expect([...phone, browser[0]!, browser[2]!].map(heardAs)).toContain('meeting');
    // A goodbye is still one.
    expect(heardAs(browser[1]!)).toBe('goodbye');
    expect(heardAs(browser[3]!)).toBe('goodbye');
  }, 120_000);

  it("recognises a browser's 16 kHz audio as it is: the keywords of every line, times in ms of that audio", async () => {
    expect(stt.wideband).toBe(true);
    const lines = ['Can you tell me your opening hours please?', 'No thank you, goodbye.', 'Can I speak to a person?'];
    for (const voice of ['slt', 'rms']) {
      // flite's slt and rms voices speak at 16 kHz, as a microphone in a browser call delivers.
      const speaker = OfflineCallerVoice.create({ synthesizer: 'flite', voice })!;
      const audio = await Promise.all(lines.map((line) => speaker.speak(line, new AbortController().signal, 16_000)));
      const results = await recognise(stt, audio, undefined, 16_000);
      console.log(`flite ${voice} at 16 kHz, keywords: ${results.map((r) => JSON.stringify(r.text)).join(', ')}`);
      expect(results[0]!.text).toContain('opening hours');
      expect(results[1]!.text).toContain('goodbye');
      expect(results[2]!.text).toContain('person');
      expect(results[0]!.endMs).toBe(Math.round((audio[0]!.length * 1000) / 16_000));
      expect(results[2]!.endMs).toBe(Math.round((audio.reduce((n, a) => n + a.length, 0) * 1000) / 16_000));
    }
  }, 120_000);

  it('fails the stream with a ProviderFailure naming pocketsphinx when a decode outlives its time limit', async () => {
    const [line] = await speakAll('flite', [DEFAULT_SCRIPT[1]!]);
    const slow = new PocketsphinxSpeechToText({ timeoutMs: 1 });
    const err = await recognise(slow, [line!], DEFAULT_SCRIPT).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderFailure);
    expect(err).toMatchObject({ provider: 'pocketsphinx', message: expect.stringContaining('longer than 1 ms') });
  }, 60_000);

  it('runs no more decoders at once than its concurrency, and still answers every utterance in order', async () => {
    const audio = await speakAll('flite', DEFAULT_SCRIPT.slice(0, 3));
    const single = new PocketsphinxSpeechToText({ concurrency: 1 });
    let most = 0;
    const poll = setInterval(() => (most = Math.max(most, runningDecoders())), 2);
    try {
      const results = await recognise(single, audio, DEFAULT_SCRIPT);
      expect(results.map((r) => r.text)).toEqual(DEFAULT_SCRIPT.slice(0, 3));
    } finally {
      clearInterval(poll);
    }
    expect(most).toBe(1);
  }, 120_000);

  it('drops what is pending when the call ends', async () => {
    const [line] = await speakAll('flite', [DEFAULT_SCRIPT[0]!]);
    const controller = new AbortController();
    const stream = stt.open({ signal: controller.signal, phrases: DEFAULT_SCRIPT });
    stream.startUtterance();
    stream.write(line!);
    stream.endUtterance();
    controller.abort();
    const seen: RecognitionResult[] = [];
    for await (const r of stream.results) seen.push(r);
    expect(seen).toEqual([]);
  }, 60_000);
});

describe.skipIf(!canRecogniseEspeak)('pocketsphinx on the phone path (espeak-ng caller)', () => {
  it('recognises the default script spoken by espeak-ng', async () => {
    const stt = new PocketsphinxSpeechToText();
    const audio = await speakAll('espeak-ng', DEFAULT_SCRIPT);
    const results = await recognise(stt, audio, DEFAULT_SCRIPT);
    const right = results.filter((r, i) => r.text === DEFAULT_SCRIPT[i]).length;
    console.log(
      `espeak-ng, default script: ${right} of 4: ${results.map((r) => `${JSON.stringify(r.text)} (${r.confidence?.toFixed(2)})`).join(', ')}`,
    );
    // Never a wrong line: a miss is empty text.
    for (const [i, r] of results.entries()) expect([DEFAULT_SCRIPT[i], '']).toContain(r.text);
    expect(right).toBe(4);
  }, 120_000);
});

describe('the simulated caller voice', () => {
  it('is absent when no synthesiser is installed', () => {
    expect(installedCallerSynthesizers('/nonexistent')).toEqual([]);
    expect(OfflineCallerVoice.create({ path: '/nonexistent' })).toBeNull();
    expect(OfflineCallerVoice.create({ synthesizer: 'flite', path: '/nonexistent' })).toBeNull();
  });

  it.skipIf(synthesizers.length === 0).each(synthesizers.length > 0 ? synthesizers : (['flite'] as const))(
    '%s speaks a line as PCM16 8 kHz, text that looks like options included',
    async (synthesizer) => {
      const voice = OfflineCallerVoice.create({ synthesizer })!;
      expect(voice.name).toBe(synthesizer);
      const pcm = await voice.speak('--help -o /tmp/owned.wav hello', new AbortController().signal);
      const seconds = pcm.length / 8000;
      expect(seconds).toBeGreaterThan(0.8);
      expect(seconds).toBeLessThan(6);
      expect(Math.max(...pcm.map(Math.abs))).toBeGreaterThan(2000);
    },
    60_000,
  );

  it.skipIf(!synthesizers.includes('flite'))(
    'takes a voice name, and refuses one that could be an option',
    async () => {
      const slt = OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'slt' })!;
      expect(slt.voice).toBe('slt');
      expect((await slt.speak('hello there', new AbortController().signal)).length).toBeGreaterThan(4000);
      expect(() => OfflineCallerVoice.create({ synthesizer: 'flite', voice: '-o' })).toThrow(/not a flite voice/);
      expect(() => OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'kal /tmp/x' })).toThrow(
        /not a flite voice/,
      );
    },
    60_000,
  );
});
