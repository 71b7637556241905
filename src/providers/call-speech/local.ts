// The local voice for live calls: espeak-ng (the persona provider's
// WebAssembly build in its worker thread, so one worker serves previews and
// calls) writes a 22,050 Hz WAV per sentence, resampled here to the
// pipeline's PCM16 8 kHz. A real provider, not a stand-in: it is what a
// persona of type `local` sounds like on a call, and the fallback when
// ElevenLabs refuses (DESIGN.md "Failures").
import { decodeWav, PIPELINE_SAMPLE_RATE, resample } from '../../lib/audio.js';
import { AppError } from '../../http/errors.js';
import { ProviderFailure } from '../failure.js';
import type { SpeechProvider } from '../voice/interface.js';
import type { CallSpeech, CallVoice } from './interface.js';

/** Samples per yielded chunk: 200 ms, so a long sentence reaches the sink in pieces it can pace. */
const CHUNK_SAMPLES = 1600;
/** espeak-ng's voice when the persona names none that espeak-ng knows (an ElevenLabs id after a fallback). */
export const DEFAULT_LOCAL_VOICE = 'en-us';

export class LocalCallSpeech implements CallSpeech {
  readonly name = 'espeak-ng';
  /** `call`: the session this speaker speaks for; the local speech queue keeps room for each call. */
  constructor(
    private readonly speech: SpeechProvider,
    private readonly call?: string,
  ) {}

  forCall(call: string): LocalCallSpeech {
    return new LocalCallSpeech(this.speech, call);
  }

  async *synthesize(text: string, voice: CallVoice, signal: AbortSignal): AsyncGenerator<Int16Array> {
    if (signal.aborted || !text.trim()) return;
    // A fallback from ElevenLabs brings an ElevenLabs voice id and settings: speak with the default voice instead.
    const local = voice.provider === 'local';
    const settings = {
      ...(local ? voice.settings : {}),
      type: 'local',
      voiceId: local ? voice.voiceId : DEFAULT_LOCAL_VOICE,
    };
    let samples: Int16Array;
    let rate: number;
    try {
      // A call's sentence: ahead of previews in the local speech queue, and withdrawn from it when the call no longer wants it.
      const audio = await this.speech.synthesize(text, settings, { priority: 'call', call: this.call, signal });
      const wav = decodeWav(audio.bytes);
      samples = wav.samples;
      rate = wav.sampleRate;
      if (wav.channels !== 1) throw new Error(`espeak-ng wrote ${wav.channels} channels`);
    } catch (error) {
      if (signal.aborted) return;
      // Bad voice settings are refused for good; busy, a crash or a timeout may pass.
      const refused = error instanceof AppError && error.code === 'invalid_input';
      throw new ProviderFailure(this.name, (error as Error).message, !refused);
    }
    const pcm = resample(samples, rate, PIPELINE_SAMPLE_RATE);
    for (let i = 0; i < pcm.length; i += CHUNK_SAMPLES) {
      if (signal.aborted) return;
      yield pcm.subarray(i, i + CHUNK_SAMPLES);
    }
  }
}
