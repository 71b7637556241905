// What the pocketsphinx provider and its per-call stream share: a prepared
// search, one utterance's outcome, and the part of the provider a stream
// drives (so the stream does not import the provider that builds it).
import type { Slots } from '../../lib/slots.js';
import type { LiveDecoder } from './pocketsphinx-live.js';

export interface PreparedSearch {
  dir: string;
  targets: Array<{ text: string; words: string[] }>;
  keywordMode: boolean;
}

/** Outcome of one utterance, with what was decoded (for logs and measurements). */
export interface UtteranceRecognition {
  text: string;
  confidence: number;
  /** Words the n-gram model decoded; the grammar's line when it ran. */
  decoded: string;
  grammar?: string;
  /** From the end of the utterance to its result, waiting for a decoder slot included. */
  wallMs: number;
}

/** The provider as a stream uses it (PocketsphinxSpeechToText implements it). */
export interface PocketsphinxEngine {
  readonly liveSlots: Slots;
  readonly timeoutMs: number;
  readonly padSamples: number;
  isSilent(pcm: Int16Array): boolean;
  removeSearch(search: PreparedSearch): Promise<void>;
  prepare(phrases: string[] | undefined): Promise<PreparedSearch>;
  startLive(search: PreparedSearch, sampleRate: 8000 | 16000, cmnInit: string | null): Promise<LiveDecoder>;
  conclude(
    search: PreparedSearch,
    id: number,
    modelText: string,
    pcm: Int16Array,
    signal: AbortSignal,
    sampleRate?: 8000 | 16000,
  ): Promise<UtteranceRecognition>;
  recognise(
    search: PreparedSearch,
    id: number,
    pcm: Int16Array,
    signal: AbortSignal,
    sampleRate?: 8000 | 16000,
  ): Promise<UtteranceRecognition>;
}
