// Speech to text for live calls (DESIGN.md "Voice agent"). Audio inside the
// voice pipeline is PCM16 mono at 8 kHz in 20 ms frames (160 samples): what
// the phone carries. An adapter converts to what its provider wants (Deepgram
// takes μ-law 8 kHz, pocketsphinx 16 kHz PCM, Whisper servers a WAV).

/** One recognition result. Times are milliseconds of audio since the stream opened. */
export interface RecognitionResult {
  text: string;
  /** false: an interim hypothesis that a later result replaces. */
  final: boolean;
  startMs: number;
  endMs: number;
  confidence?: number;
  /** false: not recognition but the sandbox caller's own words (transcript lines say so with `recognised: false`). */
  recognised?: boolean;
  /**
   * The provider's own endpointing heard the caller stop (Deepgram
   * `speech_final`): a hint the turn may be over before our VAD says so.
   */
  endOfSpeech?: boolean;
}

export interface RecognitionStream {
  /** Caller audio, PCM16 mono 8 kHz, in order; any whole number of samples. */
  write(pcm: Int16Array): void;
  /**
   * Our voice activity detector saw the caller stop. Utterance providers
   * (OpenAI-compatible, pocketsphinx) transcribe what arrived since the last
   * cut and yield one final result (empty text when nothing was recognised);
   * streaming providers (Deepgram) finalize what they hold.
   */
  endUtterance(): void;
  /** Results in order. Throws a ProviderFailure when the provider fails or the socket drops. */
  readonly results: AsyncIterable<RecognitionResult>;
  /** Ends the stream; pending results are dropped. */
  close(): Promise<void>;
}

export interface RecognitionOptions {
  signal: AbortSignal;
  /** Phrases the caller is expected to say (sandbox scripts, tool words): grammars and keyword boosts use them. */
  phrases?: string[];
}

export interface SpeechToText {
  /** `deepgram`, `openai`, `pocketsphinx`, …: names the provider in errors and records. */
  readonly name: string;
  /** true when results come while the caller speaks (no need to wait for endUtterance). */
  readonly streaming: boolean;
  open(options: RecognitionOptions): RecognitionStream;
}
