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
  /** Caller audio, PCM16 mono at the rate the stream was opened with (8 kHz unless asked otherwise), in order; any whole number of samples. */
  write(pcm: Int16Array): void;
  /**
   * Our voice activity detector saw the caller start speaking at `atMs` of
   * stream time (default: the audio written so far); it tells this after the
   * audio (a detector decides a few frames late). Utterance providers
   * (OpenAI-compatible, pocketsphinx) keep from `atMs` less a short pre-roll
   * (utterance-window.ts PRE_ROLL_MS); outside an utterance they keep only
   * the last moments, never the agent's turn or the silence between turns.
   * Streaming providers (Deepgram) hear everything and ignore it.
   */
  startUtterance(atMs?: number): void;
  /**
   * Our voice activity detector saw the caller stop; `atMs` (stream time) is
   * the end of the last speech frame (default: the audio written so far).
   * Utterance providers transcribe from the start to `atMs` plus a short
   * post-roll and yield one final result (empty text when nothing was
   * recognised, or when no utterance was started); streaming providers
   * finalize what they hold.
   */
  endUtterance(atMs?: number): void;
  /** Results in order. Throws a ProviderFailure when the provider fails or the socket drops. */
  readonly results: AsyncIterable<RecognitionResult>;
  /** Ends the stream; pending results are dropped. */
  close(): Promise<void>;
}

export interface RecognitionOptions {
  signal: AbortSignal;
  /** Phrases the caller is expected to say (sandbox scripts, tool words): grammars and keyword boosts use them. */
  phrases?: string[];
  /**
   * The rate of the audio written: 8000 (default, the phone) or 16000 (a
   * browser call), which only a provider with `wideband` accepts.
   */
  sampleRate?: 8000 | 16000;
}

export interface SpeechToText {
  /** `deepgram`, `openai`, `pocketsphinx`, …: names the provider in errors and records. */
  readonly name: string;
  /** true when results come while the caller speaks (no need to wait for endUtterance). */
  readonly streaming: boolean;
  /** true: open() accepts `sampleRate: 16000`, and recognises wideband audio as it is rather than the phone band. */
  readonly wideband?: boolean;
  /**
   * The confidence below which this recogniser's finals for a call expecting
   * `phrases` are guesses, not to be acted on (the session marks them
   * "(unclear)"); undefined: its confidence is not a guide.
   */
  minConfidence?(phrases: string[] | undefined): number | undefined;
  open(options: RecognitionOptions): RecognitionStream;
}
