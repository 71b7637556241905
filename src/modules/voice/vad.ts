// Voice activity: a detector gives each caller frame a speech probability; a
// SpeechGate turns probabilities into speech start / end with hysteresis.
// The real detector is Silero (silero-vad.ts); EnergyVad is the fallback when
// its model cannot load.
import { FRAME_SAMPLES_8K } from '../../lib/audio.js';

export interface VoiceActivityDetector {
  readonly name: string;
  /**
   * Speech probability (0..1) of one 20 ms frame (160 samples, PCM16 8 kHz).
   * Synchronous where the detector can be (energy, scripted); Silero answers
   * with a promise. Frames must be given in order, one at a time.
   */
  process(frame: Int16Array): number | Promise<number>;
}

/** Loudness only: speech between `quietDb` (p = 0) and `loudDb` (p = 1) dBFS of frame RMS. */
export class EnergyVad implements VoiceActivityDetector {
  readonly name = 'energy';
  constructor(
    private readonly quietDb = -50,
    private readonly loudDb = -35,
  ) {}
  process(frame: Int16Array): number {
    let sum = 0;
    for (let i = 0; i < frame.length; i++) sum += frame[i]! * frame[i]!;
    const rms = Math.sqrt(sum / Math.max(1, frame.length)) / 32768;
    const db = rms > 0 ? 20 * Math.log10(rms) : -120;
    return Math.min(1, Math.max(0, (db - this.quietDb) / (this.loudDb - this.quietDb)));
  }
}

export interface SpeechGateOptions {
  /** Probability at or above which a frame is speech. Default 0.5. */
  startThreshold?: number;
  /** Probability below which a frame is silence (between: keeps the current state). Default 0.35. */
  stopThreshold?: number;
  /** Speech frames in a row before speech counts as started. Default 3 (60 ms). */
  startFrames?: number;
  /** Silent frames in a row before speech counts as ended. Default 10 (200 ms). */
  stopFrames?: number;
}

/**
 * `frame` (when push was given frame numbers): the first speech frame of the
 * run for a start, the frame after the last speech frame for an end. The
 * session finds the utterance's audio by it: frame times come from arrival and
 * repeat when frames arrive in a burst.
 */
export type SpeechEdge =
  | { type: 'speech_start'; atMs: number; frame?: number }
  | { type: 'speech_end'; atMs: number; frame?: number };

/**
 * Hysteresis over per-frame probabilities. `speech_start.atMs` is the start
 * of the first speech frame of the run; `speech_end.atMs` the end of the last
 * speech frame (the hang-over is not counted as speech).
 */
export class SpeechGate {
  private speaking = false;
  private run = 0;
  private runStartMs = 0;
  private runStartFrame = 0;
  private lastSpeechEndMs = 0;
  private lastSpeechEndFrame = 0;
  private readonly o: Required<SpeechGateOptions>;

  constructor(options: SpeechGateOptions = {}) {
    this.o = { startThreshold: 0.5, stopThreshold: 0.35, startFrames: 3, stopFrames: 10, ...options };
  }

  get inSpeech() {
    return this.speaking;
  }

  /** One frame's probability; `frameStartMs` is the call time the frame began, `frame` its number in the call (optional). */
  push(
    probability: number,
    frameStartMs: number,
    frameMs = (FRAME_SAMPLES_8K / 8000) * 1000,
    frame?: number,
  ): SpeechEdge | null {
    if (!this.speaking) {
      if (probability >= this.o.startThreshold) {
        if (this.run === 0) {
          this.runStartMs = frameStartMs;
          this.runStartFrame = frame ?? 0;
        }
        this.run++;
        if (this.run >= this.o.startFrames) {
          this.speaking = true;
          this.run = 0;
          this.lastSpeechEndMs = frameStartMs + frameMs;
          this.lastSpeechEndFrame = (frame ?? 0) + 1;
          return {
            type: 'speech_start',
            atMs: this.runStartMs,
            ...(frame === undefined ? {} : { frame: this.runStartFrame }),
          };
        }
      } else this.run = 0;
      return null;
    }
    if (probability < this.o.stopThreshold) {
      this.run++;
      if (this.run >= this.o.stopFrames) {
        this.speaking = false;
        this.run = 0;
        return {
          type: 'speech_end',
          atMs: this.lastSpeechEndMs,
          ...(frame === undefined ? {} : { frame: this.lastSpeechEndFrame }),
        };
      }
    } else {
      this.run = 0;
      this.lastSpeechEndMs = frameStartMs + frameMs;
      this.lastSpeechEndFrame = (frame ?? 0) + 1;
    }
    return null;
  }
}
