// Speech providers for personas (DESIGN "Personas and voices"): local speech
// (espeak-ng, WAV) always; ElevenLabs when ELEVENLABS_API_KEY is set.
import type { SpeechRequest } from './speech-queue.js';

export type { SpeechPriority, SpeechRequest } from './speech-queue.js';

export interface SynthesizedAudio {
  bytes: Uint8Array;
  /** audio/wav (local) or audio/mpeg (ElevenLabs). */
  contentType: string;
}

/** Provider-specific persona settings; `type` picks the provider, `voiceId` the voice. */
export interface VoiceSettings {
  type: string;
  voiceId: string;
  [setting: string]: unknown;
}

export interface SpeechProvider {
  readonly name: string;
  /**
   * Speaks `text` with the voice `settings` describe. `request` says who it
   * is for: local speech serves calls before previews and limits previews per
   * account; a paid provider ignores it.
   */
  synthesize(text: string, settings: VoiceSettings, request?: SpeechRequest): Promise<SynthesizedAudio>;
}

/** A voice of an external provider, before it is shown as a persona. */
export interface ExternalVoice {
  voiceId: string;
  name: string;
  description: string | null;
  category: string | null;
  labels: Record<string, string>;
  previewUrl: string | null;
}

export interface ExternalVoiceProvider extends SpeechProvider {
  /** The account's voices; null when the provider refuses the key (401/403). Throws provider_error when unreachable. */
  listVoices(): Promise<ExternalVoice[] | null>;
}

/** The voice providers of one service: local speech always, an external provider when configured. */
export interface VoiceProviders {
  readonly name: string;
  readonly sandbox: boolean;
  readonly local: SpeechProvider & { close?(): Promise<void> };
  readonly external: ExternalVoiceProvider | null;
}
