// Deepgram live transcription: one WebSocket per call to
// {DEEPGRAM_API_BASE}/v1/listen, μ-law 8 kHz sent as it comes (what the phone
// carries, so nothing is converted twice), interim and final `Results` back.
// Control messages are text frames: `Finalize` when our VAD cuts an
// utterance, `KeepAlive` while no audio flows (Deepgram closes a socket
// silent for 10 s), `CloseStream` to end. Anything that ends the socket
// without our asking fails the results with a ProviderFailure, so the
// pipeline can reopen and replay (DESIGN.md "Failures").
import WebSocket from 'ws';
import { pcmToMulawInto } from '../../lib/audio.js';
import { AsyncQueue } from '../../lib/async-queue.js';
import { ProviderFailure } from '../failure.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';

export interface DeepgramConfig {
  apiKey: string;
  /** WebSocket origin: wss://api.deepgram.com, or a local server in tests. */
  apiBase: string;
  /** Deepgram model (default nova-3; nova-2-phonecall suits narrowband audio too). */
  model?: string;
  /** Deepgram's own end-of-speech silence, in ms (its `speech_final`); our VAD still decides turns. */
  endpointingMs?: number;
  /** Interval of KeepAlive messages while no audio is sent (Deepgram advises 3–5 s). */
  keepAliveMs?: number;
  /** Longest wait for the socket to open before the stream fails. */
  connectTimeoutMs?: number;
  /**
   * Audio per WebSocket message, in ms (whole 20 ms frames; default 20: each frame as it comes). A message costs a
   * send (a masked frame, a socket write) whatever its size, so live calls send 200 ms (Deepgram advises 20–250 ms):
   * a tenth of the writes. What is held goes out before Finalize and CloseStream, so a cut waits for no audio.
   */
  chunkMs?: number;
}

const PROVIDER = 'deepgram';
/** Audio (and Finalize) written before the socket opens is held, up to this many bytes (10 s of μ-law). */
const MAX_PENDING_BYTES = 80_000;

/** One `Results` message as Deepgram sends it (the fields we read). */
interface DeepgramResults {
  type: 'Results';
  start?: number;
  duration?: number;
  is_final?: boolean;
  speech_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number }> };
}

export class DeepgramSpeechToText implements SpeechToText {
  readonly name = PROVIDER;
  readonly streaming = true;
  constructor(private readonly config: DeepgramConfig) {}

  /** The listen URL for these settings. */
  listenUrl(): string {
    const base = this.config.apiBase.replace(/\/+$/, '');
    const url = new URL(`${base}/v1/listen`);
    const params: Record<string, string> = {
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      model: this.config.model ?? 'nova-3',
      interim_results: 'true',
      punctuate: 'true',
      endpointing: String(this.config.endpointingMs ?? 300),
    };
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.href;
  }

  open(options: RecognitionOptions): RecognitionStream {
    return new DeepgramStream(this.listenUrl(), this.config, options.signal);
  }
}

class DeepgramStream implements RecognitionStream {
  private readonly queue = new AsyncQueue<RecognitionResult>();
  readonly results: AsyncIterable<RecognitionResult> = this.queue;
  private readonly socket: WebSocket;
  /** Audio and control messages waiting for the socket to open, in order. */
  private pending: Array<Buffer | string> = [];
  private pendingBytes = 0;
  /** μ-law not yet sent (less than a chunk), and how much of `held` it fills. */
  private held: Buffer;
  private heldBytes = 0;
  private readonly chunkBytes: number;
  private lastSentAt = Date.now();
  private readonly keepAlive: NodeJS.Timeout;
  private readonly connectTimer: NodeJS.Timeout;
  /** Set once we asked to close: the socket's end is then not a failure. */
  private closing = false;
  private closed: Promise<void>;
  private readonly onAbort = () => this.terminate();

  constructor(
    url: string,
    readonly config: DeepgramConfig,
    private readonly signal: AbortSignal,
  ) {
    this.chunkBytes = Math.max(1, Math.round(((config.chunkMs ?? 20) * 8000) / 1000));
    this.held = Buffer.allocUnsafe(this.chunkBytes * 2);
    this.socket = new WebSocket(url, {
      headers: { Authorization: `Token ${config.apiKey}` },
      perMessageDeflate: false,
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.connectTimer = setTimeout(() => {
      this.fail(new ProviderFailure(PROVIDER, 'the connection did not open in time'));
      this.socket.terminate();
    }, config.connectTimeoutMs ?? 10_000);
    const keepAliveMs = config.keepAliveMs ?? 4000;
    this.keepAlive = setInterval(() => {
      if (this.socket.readyState === WebSocket.OPEN && Date.now() - this.lastSentAt >= keepAliveMs)
        this.sendControl('KeepAlive');
    }, keepAliveMs);
    this.keepAlive.unref();

    this.socket.on('open', () => {
      clearTimeout(this.connectTimer);
      for (const chunk of this.pending) this.socket.send(chunk);
      this.pending = [];
      this.pendingBytes = 0;
      this.lastSentAt = Date.now();
    });
    this.socket.on('message', (data, isBinary) => {
      if (!isBinary) this.handleMessage(data.toString());
    });
    // A refused handshake: Deepgram answers 401/403 for a bad key, 400 for bad options, 429/5xx when busy.
    this.socket.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const reason = String(res.headers['dg-error'] ?? '') || res.statusMessage || '';
      res.resume();
      this.fail(
        new ProviderFailure(
          PROVIDER,
          `refused the connection (HTTP ${status}${reason ? `: ${reason}` : ''})`,
          status === 429 || status >= 500,
        ),
      );
      this.socket.terminate();
    });
    this.socket.on('error', (err) => this.fail(new ProviderFailure(PROVIDER, `connection failed: ${err.message}`)));
    this.socket.on('close', (code, reason) => {
      this.stopTimers();
      if (this.closing) return this.queue.end();
      // Anything else ended the stream under us: 1011 NET-… (timeouts), 1006 (dropped), even a 1000 we did not ask for.
      // 1008 is Deepgram refusing the audio itself (DATA-…): sending the same again would not help.
      const text = reason.toString();
      this.fail(new ProviderFailure(PROVIDER, `the stream closed (${code}${text ? ` ${text}` : ''})`, code !== 1008));
    });
    if (signal.aborted) this.terminate();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm: Int16Array): void {
    if (this.queue.closed || this.closing || pcm.length === 0) return;
    if (this.heldBytes + pcm.length > this.held.length) {
      const grown = Buffer.allocUnsafe(this.heldBytes + pcm.length);
      this.held.copy(grown, 0, 0, this.heldBytes);
      this.held = grown;
    }
    pcmToMulawInto(pcm, this.held.subarray(this.heldBytes));
    this.heldBytes += pcm.length;
    if (this.heldBytes >= this.chunkBytes) this.flush();
  }

  /** Sends (or, before the socket opens, holds in order) the audio written so far. */
  private flush(): void {
    if (this.heldBytes === 0) return;
    const bytes = Buffer.from(this.held.subarray(0, this.heldBytes));
    this.heldBytes = 0;
    if (this.held.length > this.chunkBytes * 2) this.held = Buffer.allocUnsafe(this.chunkBytes * 2);
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(bytes);
      this.lastSentAt = Date.now();
      return;
    }
    if (this.socket.readyState !== WebSocket.CONNECTING) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    while (this.pendingBytes > MAX_PENDING_BYTES) {
      const dropped = this.pending.shift()!;
      if (typeof dropped !== 'string') this.pendingBytes -= dropped.length;
    }
  }

  /** Deepgram streams: it hears the whole call and finds speech itself. */
  startUtterance(): void {}

  endUtterance(): void {
    if (this.closing || this.queue.closed) return;
    this.flush();
    if (this.socket.readyState === WebSocket.OPEN) this.sendControl('Finalize');
    // Cut before the socket opened: finalize right after the held audio is sent.
    else if (this.socket.readyState === WebSocket.CONNECTING) this.pending.push(JSON.stringify({ type: 'Finalize' }));
  }

  async close(): Promise<void> {
    if (this.closing) return this.closed;
    this.closing = true;
    this.stopTimers();
    this.queue.discard();
    this.flush();
    if (this.socket.readyState === WebSocket.OPEN) {
      // Deepgram answers CloseStream with its Metadata and a 1000 close; do not wait long for it.
      this.sendControl('CloseStream');
      const timer = setTimeout(() => this.socket.terminate(), 2000);
      await this.closed;
      clearTimeout(timer);
    } else {
      this.socket.terminate();
      await this.closed;
    }
  }

  private sendControl(type: 'KeepAlive' | 'Finalize' | 'CloseStream'): void {
    this.socket.send(JSON.stringify({ type }));
    if (type !== 'KeepAlive') this.lastSentAt = Date.now();
  }

  private handleMessage(text: string): void {
    let message: { type?: unknown };
    try {
      message = JSON.parse(text) as { type?: unknown };
    } catch {
      return;
    }
    if (message.type !== 'Results') return;
    const results = message as DeepgramResults;
    const best = results.channel?.alternatives?.[0];
    const transcript = (best?.transcript ?? '').trim();
    const final = results.is_final === true;
    // Empty interims and Deepgram's empty finals over silence say nothing; an empty answer to our Finalize does
    // (the utterance had no words), so the pipeline is not left waiting for it.
    if (!transcript && !(final && results.from_finalize)) return;
    const startMs = Math.round((results.start ?? 0) * 1000);
    const result: RecognitionResult = {
      text: transcript,
      final,
      startMs,
      endMs: Math.round(((results.start ?? 0) + (results.duration ?? 0)) * 1000),
    };
    if (typeof best?.confidence === 'number') result.confidence = best.confidence;
    if (results.speech_final) result.endOfSpeech = true;
    this.queue.push(result);
  }

  private fail(failure: ProviderFailure): void {
    this.stopTimers();
    this.queue.fail(failure);
  }

  /** Aborted: drop the socket at once, end the results quietly. */
  private terminate(): void {
    this.closing = true;
    this.stopTimers();
    this.queue.discard();
    this.socket.terminate();
  }

  private stopTimers(): void {
    clearInterval(this.keepAlive);
    clearTimeout(this.connectTimer);
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
