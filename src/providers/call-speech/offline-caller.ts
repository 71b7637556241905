// The sandbox carrier's simulated caller speaks its script with a local
// synthesiser (DESIGN.md "Sandbox carrier"): flite (whose voices are 8 kHz,
// the phone's rate, and which pocketsphinx recognises best) or the espeak-ng
// command line, each line in a child process (../local-synthesis.ts).
import { decodeWav, PIPELINE_SAMPLE_RATE, resample } from '../../lib/audio.js';
import { ProviderFailure } from '../failure.js';
import { SynthesisError, synthesizeWithBinary } from '../local-synthesis.js';
import { findBinary } from '../speech-to-text/pocketsphinx.js';

export type CallerSynthesizer = 'flite' | 'espeak-ng';

/** The synthesisers installed here, best for recognition first. */
export function installedCallerSynthesizers(path?: string): CallerSynthesizer[] {
  return (['flite', 'espeak-ng'] as const).filter((name) => findBinary(name, path) !== null);
}

export interface OfflineCallerVoiceOptions {
  /** Which synthesiser (default: the first installed, flite before espeak-ng). */
  synthesizer?: CallerSynthesizer;
  /** Longest one line may take (default 15 s). */
  timeoutMs?: number;
  /** Where the synthesisers are looked up (default PATH). */
  path?: string;
  /** The synthesiser's voice: flite `kal` (default), `slt`, `rms`, `awb`…; espeak-ng `en-us` (default), `en-gb`… */
  voice?: string;
}

const VOICE_NAME = /^[a-z][a-z0-9_-]{0,31}(?:\+[a-z0-9]{1,16})?$/i;

export class OfflineCallerVoice {
  readonly name: CallerSynthesizer;
  private readonly timeoutMs: number;

  private constructor(
    name: CallerSynthesizer,
    private readonly binary: string,
    readonly voice: string,
    timeoutMs: number,
  ) {
    this.name = name;
    this.timeoutMs = timeoutMs;
  }

  /** A voice when a synthesiser is installed, else null (the carrier then has no caller audio to send). */
  static create(options: OfflineCallerVoiceOptions = {}): OfflineCallerVoice | null {
    const installed = installedCallerSynthesizers(options.path);
    const name = options.synthesizer ?? installed[0];
    const binary = name && installed.includes(name) ? findBinary(name, options.path) : null;
    if (!name || !binary) return null;
    const voice = options.voice ?? (name === 'flite' ? 'kal' : 'en-us');
    if (!VOICE_NAME.test(voice)) throw new Error(`"${voice}" is not a ${name} voice name`);
    return new OfflineCallerVoice(name, binary, voice, options.timeoutMs ?? 15_000);
  }

  /** Speaks one line: PCM16 mono at `sampleRate` (8 kHz: the phone; 16 kHz: a browser). Throws a ProviderFailure when the synthesiser fails. */
  async speak(text: string, signal: AbortSignal, sampleRate: number = PIPELINE_SAMPLE_RATE): Promise<Int16Array> {
    const args = (input: string, output: string) =>
      this.name === 'flite'
        ? ['-voice', this.voice, '-f', input, '-o', output]
        : ['-v', this.voice, '-f', input, '-w', output];
    let bytes: Buffer;
    try {
      bytes = await synthesizeWithBinary(this.binary, args, text, { timeoutMs: this.timeoutMs, signal });
    } catch (err) {
      throw err instanceof SynthesisError
        ? new ProviderFailure(this.name, err.timedOut ? `speaking ${err.message}` : err.message)
        : err;
    }
    const wav = decodeWav(bytes);
    const mono = wav.channels === 1 ? wav.samples : wav.samples.filter((_, i) => i % wav.channels === 0);
    return resample(mono, wav.sampleRate, sampleRate);
  }
}
