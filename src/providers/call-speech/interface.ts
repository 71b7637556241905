// Speech for live calls (DESIGN.md "Voice agent"): text in, PCM16 mono 8 kHz
// out as it is produced, so the first frame can be played before the last is
// made. Persona previews keep using providers/voice (whole files).

export interface CallVoice {
  /** `elevenlabs` or `local` (a persona's settings.type). */
  provider: string;
  voiceId: string;
  /** The persona's other settings: `modelId` for ElevenLabs; `speed`, `pitch`, … for espeak-ng. */
  settings?: Record<string, unknown>;
}

export interface CallSpeech {
  /** `elevenlabs` or `espeak-ng`: names the provider in errors and records. */
  readonly name: string;
  /**
   * Speaks one sentence. Yields PCM16 mono 8 kHz chunks (any length) as they
   * arrive. Throws a ProviderFailure when the provider refuses or fails.
   */
  synthesize(text: string, voice: CallVoice, signal: AbortSignal): AsyncIterable<Int16Array>;
  /** The same speech bound to one call, when the provider keeps room per call (local speech); absent: shared as is. */
  forCall?(call: string): CallSpeech;
}
