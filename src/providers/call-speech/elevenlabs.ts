// ElevenLabs speech for live calls: the persona's voice streamed as μ-law
// 8 kHz (DESIGN.md "Voice agent": output_format=ulaw_8000), decoded to the
// pipeline's PCM16 chunk by chunk, so the first frame plays while the rest of
// the sentence is still being made. The HTTP side is the persona provider's
// (same key, same base, same outbound client): one ElevenLabs adapter.
import { mulawToPcm } from '../../lib/audio.js';
import { ProviderFailure } from '../failure.js';
import { DEFAULT_ELEVENLABS_CALL_MODEL, type ElevenLabsVoiceProvider } from '../voice/elevenlabs.js';
import type { CallSpeech, CallVoice } from './interface.js';

export class ElevenLabsCallSpeech implements CallSpeech {
  readonly name = 'elevenlabs';
  constructor(private readonly voices: ElevenLabsVoiceProvider) {}

  async *synthesize(text: string, voice: CallVoice, signal: AbortSignal): AsyncGenerator<Int16Array> {
    if (signal.aborted) return;
    const modelId =
      typeof voice.settings?.modelId === 'string' ? voice.settings.modelId : DEFAULT_ELEVENLABS_CALL_MODEL;
    let bytes = 0;
    try {
      // Each μ-law byte is one sample: a chunk boundary never splits a sample.
      for await (const chunk of this.voices.streamUlaw(text, voice.voiceId, modelId, signal)) {
        bytes += chunk.length;
        yield mulawToPcm(chunk);
      }
    } catch (error) {
      // Cancelled by the caller (barge-in): the speech just stops.
      if (signal.aborted) return;
      throw error;
    }
    if (bytes === 0 && text.trim()) throw new ProviderFailure(this.name, 'answered with no audio');
  }
}
