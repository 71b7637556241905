// Any OpenAI-compatible transcription endpoint (OpenAI, Groq, a local
// whisper.cpp / faster-whisper server): POST {STT_URL}/audio/transcriptions,
// multipart with the utterance as a 16-bit WAV. Not streaming: the utterance
// (our VAD's start of speech less a pre-roll to its end plus a post-roll,
// utterance-window.ts) is held until the VAD cuts it, then sent as one
// request; requests run one at a time so results come in the caller's order.
// The URL is the operator's, so private addresses are allowed (a Whisper
// server on localhost is the usual case), through the one outbound client.
import { randomBytes } from 'node:crypto';
import { encodeWav, resample } from '../../lib/audio.js';
import { AsyncQueue } from '../../lib/async-queue.js';
import { type OutboundHttp, bufferResponse, createOperatorHttp } from '../../lib/outbound-http.js';
import { ProviderFailure } from '../failure.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';
import { UtteranceWindow } from './utterance-window.js';

export interface OpenAiSpeechToTextConfig {
  /** API base in the OpenAI SDK's sense (https://api.openai.com/v1, http://localhost:8080/v1). */
  url: string;
  apiKey: string | null;
  /** whisper-1, gpt-4o-mini-transcribe, or the local server's model name. */
  model: string;
  /** Deadline of one transcription request (default 15 s). */
  timeoutMs?: number;
}

const PROVIDER = 'openai';
/**
 * Whisper works at 16 kHz and some local servers (whisper.cpp without
 * --convert) accept nothing else, so a phone call's 8 kHz utterance is sent
 * upsampled.
 */
const WAV_SAMPLE_RATE = 16_000;
/** Longest utterance sent: 60 s of caller audio (a longer one is cut to its last minute). */
const MAX_UTTERANCE_MS = 60_000;
/** Utterances of one call waiting to be transcribed before further ones are answered empty. */
const MAX_WAITING_UTTERANCES = 8;

/** A multipart/form-data body (built here: the outbound client takes bytes as they are). */
export function multipartBody(
  fields: Record<string, string>,
  file: { field: string; filename: string; contentType: string; bytes: Buffer },
): { body: Buffer; contentType: string } {
  const boundary = `----voice${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.filename}"\r\ncontent-type: ${file.contentType}\r\n\r\n`,
    ),
  );
  parts.push(file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** 4xx other than 429 are refusals (a bad key, a bad model): trying again would not help. */
export const retryableStatus = (status: number): boolean => status === 429 || status === 408 || status >= 500;

export class OpenAiSpeechToText implements SpeechToText {
  readonly name = PROVIDER;
  readonly streaming = false;
  /** Whisper hears 16 kHz: a browser call's audio is sent as it came, not through the phone band. */
  readonly wideband = true;
  private readonly endpoint: string;
  private readonly http: OutboundHttp;

  constructor(private readonly config: OpenAiSpeechToTextConfig) {
    const base = config.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/audio/transcriptions') ? base : `${base}/audio/transcriptions`;
    this.http = createOperatorHttp({ timeoutMs: config.timeoutMs ?? 15_000, maxBytes: 1024 * 1024 });
  }

  open(options: RecognitionOptions): RecognitionStream {
    const sampleRate = options.sampleRate ?? 8000;
    return new UtteranceStream((pcm, signal) => this.transcribe(pcm, signal, sampleRate), options.signal, sampleRate);
  }

  /** One utterance (PCM16 at 8 kHz, or a browser's 16 kHz) → its text. Throws ProviderFailure. */
  async transcribe(pcm: Int16Array, signal: AbortSignal, sampleRate: 8000 | 16000 = 8000): Promise<string> {
    const wav = encodeWav(resample(pcm, sampleRate, WAV_SAMPLE_RATE), WAV_SAMPLE_RATE);
    const { body, contentType } = multipartBody(
      { model: this.config.model, response_format: 'json' },
      { field: 'file', filename: 'utterance.wav', contentType: 'audio/wav', bytes: wav },
    );
    const headers: Record<string, string> = { 'content-type': contentType, accept: 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    let res: Response;
    let answer: { text?: unknown; error?: { message?: unknown } } | null;
    try {
      res = await bufferResponse(await this.http(this.endpoint, { method: 'POST', headers, body, signal }));
      answer = (await res.json().catch(() => null)) as typeof answer;
    } catch (error) {
      throw new ProviderFailure(PROVIDER, `transcription request failed: ${(error as Error).message}`);
    }
    if (!res.ok) {
      const detail = typeof answer?.error?.message === 'string' ? `: ${answer.error.message.slice(0, 200)}` : '';
      throw new ProviderFailure(
        PROVIDER,
        `transcription refused (HTTP ${res.status}${detail})`,
        retryableStatus(res.status),
      );
    }
    if (typeof answer?.text !== 'string') throw new ProviderFailure(PROVIDER, 'transcription answer has no text');
    return answer.text.trim();
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** Holds each utterance the VAD cuts and turns it into one final result, in order. */
class UtteranceStream implements RecognitionStream {
  private readonly queue = new AsyncQueue<RecognitionResult>();
  readonly results: AsyncIterable<RecognitionResult> = this.queue;
  private readonly window: UtteranceWindow;
  private chain: Promise<void> = Promise.resolve();
  /** Utterances cut and not yet sent. */
  private waiting = 0;
  private readonly controller = new AbortController();

  constructor(
    private readonly transcribe: (pcm: Int16Array, signal: AbortSignal) => Promise<string>,
    signal: AbortSignal,
    sampleRate: 8000 | 16000,
  ) {
    this.window = new UtteranceWindow(sampleRate, MAX_UTTERANCE_MS);
    const stop = () => void this.close();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  }

  write(pcm: Int16Array): void {
    if (!this.queue.closed) this.window.write(pcm);
  }

  startUtterance(atMs?: number): void {
    if (!this.queue.closed) this.window.start(atMs);
  }

  endUtterance(atMs?: number): void {
    if (this.queue.closed) return;
    // No utterance open (a cut the session replays, a test): an empty result, nothing sent.
    const now = this.window.msOf(this.window.written);
    const { pcm, startMs, endMs } = this.window.end(atMs) ?? { pcm: new Int16Array(0), startMs: now, endMs: now };
    // More utterances waiting than MAX_WAITING_UTTERANCES (noise the VAD keeps cutting): the extra ones are answered empty, unsent.
    const utterance = this.waiting >= MAX_WAITING_UTTERANCES ? new Int16Array(0) : pcm;
    this.waiting++;
    this.chain = this.chain.then(async () => {
      this.waiting--;
      if (this.queue.closed) return;
      try {
        // Nothing heard: nothing to send, the answer is known.
        const text = utterance.length === 0 ? '' : await this.transcribe(utterance, this.controller.signal);
        this.queue.push({ text, final: true, startMs, endMs });
      } catch (error) {
        this.queue.fail(error instanceof ProviderFailure ? error : new ProviderFailure(PROVIDER, String(error)));
      }
    });
  }

  async close(): Promise<void> {
    this.queue.discard();
    this.controller.abort();
    await this.chain;
  }
}
