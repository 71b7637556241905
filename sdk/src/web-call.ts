// Web calls (POST /api/calls/web, GET /api/media/web): the socket protocol
// as a small typed connection, and a scripted player that speaks WAV audio
// to the agent and keeps what it says (Node and browsers alike: only a
// WebSocket is needed). The browser player with microphone and speaker is
// web-call-browser.ts.
//
//   const call = await client.calls.startWeb({ agentId });
//   const result = await playWavCall(call, { turns: [wavBytes] });   // Node: read/write files with fs
//   result.transcript, result.tools, result.ended, result.agentWav
import type { Answer } from './api-types.js';

/** The answer of POST /api/calls/web. */
export type WebCallStarted = Answer<'/api/calls/web', 'post'>;

export type WebCallMessage =
  | { type: 'mark'; name: string }
  | { type: 'clear' }
  | { type: 'transcript'; role: 'agent' | 'caller'; text: string; final: boolean; interrupted?: boolean }
  | { type: 'tool'; name: string; arguments: unknown; result: unknown }
  | { type: 'ended'; reason: string };

/** The part of a WebSocket a web call uses: the browser's, Node 22's global one, or the `ws` package's. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (event: any) => void): void;
}

export type WebSocketFactory = new (url: string) => WebSocketLike;

export interface WebCallHandlers {
  /** Agent audio: PCM16 mono at the call's sample rate (20 ms frames, paced). */
  audio?(samples: Int16Array): void;
  /** Acknowledge it with `ackMark(name)` once the audio before it has played. */
  mark?(name: string): void;
  /** Barge-in: stop playback now and drop what is queued. */
  clear?(): void;
  /**
   * A transcript line as it is said: an agent reply with `final: false` as
   * each of its sentences starts (the text grows), then `final: true` with
   * what was heard (`interrupted` when the caller cut it; empty when none of
   * it was heard); a caller line once, `final: true`.
   */
  transcript?(line: { role: 'agent' | 'caller'; text: string; final: boolean; interrupted?: boolean }): void;
  tool?(call: { name: string; arguments: unknown; result: unknown }): void;
}

export interface WebCallEnd {
  /** The server's reason (`agent_ended`, `silence`, `max_duration`, `caller_hung_up` after hangUp(), …); null when the socket closed without one (closed by the client, dropped, or a refused token). */
  reason: string | null;
  /** The socket's close code: 1000 normal, 1008 a refused token. */
  code: number;
}

/** The largest audio message sent: half the server's limit (64 KB, beyond which it closes with 1009). */
const MAX_AUDIO_MESSAGE_BYTES = 32 * 1024;

/**
 * One web call's socket: caller audio out, agent audio and messages in. The
 * server's JSON messages go to `handlers`; `ended` resolves when the socket
 * closes. Audio sent must be PCM16 mono at `audio.sampleRate`; it is cut
 * into 20 ms frames here.
 */
export class WebCallConnection {
  readonly sampleRate: number;
  readonly opened: Promise<void>;
  readonly ended: Promise<WebCallEnd>;
  private readonly socket: WebSocketLike;
  private readonly frameSamples: number;
  private carry = new Int16Array(0);
  private endReason: string | null = null;

  constructor(
    started: Pick<WebCallStarted, 'url' | 'audio'>,
    handlers: WebCallHandlers = {},
    options: { WebSocket?: WebSocketFactory } = {},
  ) {
    const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketFactory }).WebSocket;
    if (!Socket) throw new Error('no WebSocket here: pass options.WebSocket (e.g. the `ws` package in Node 20)');
    this.sampleRate = started.audio.sampleRate;
    this.frameSamples = (started.audio.sampleRate / 1000) * started.audio.frameMs;
    this.socket = new Socket(started.url);
    this.socket.binaryType = 'arraybuffer';
    this.opened = new Promise((resolve, reject) => {
      this.socket.addEventListener('open', () => resolve());
      this.socket.addEventListener('error', (event) =>
        reject(new Error(`web call socket failed: ${(event as { message?: string }).message ?? 'error'}`)),
      );
    });
    this.opened.catch(() => {});
    this.ended = new Promise((resolve) =>
      this.socket.addEventListener('close', (event: { code: number }) =>
        resolve({ reason: this.endReason, code: event.code }),
      ),
    );
    this.socket.addEventListener('message', (event: { data: unknown }) => {
      const data = event.data;
      if (typeof data !== 'string') {
        const bytes =
          data instanceof ArrayBuffer
            ? new Uint8Array(data)
            : new Uint8Array(
                (data as ArrayBufferView).buffer,
                (data as ArrayBufferView).byteOffset,
                (data as ArrayBufferView).byteLength,
              );
        handlers.audio?.(pcmFromBytes(bytes));
        return;
      }
      let message: WebCallMessage;
      try {
        message = JSON.parse(data) as WebCallMessage;
      } catch {
        return;
      }
      switch (message.type) {
        case 'mark':
          return handlers.mark?.(message.name);
        case 'clear':
          return handlers.clear?.();
        case 'transcript':
          return handlers.transcript?.({
            role: message.role,
            text: message.text,
            final: message.final,
            ...(message.interrupted ? { interrupted: true } : {}),
          });
        case 'tool':
          return handlers.tool?.({ name: message.name, arguments: message.arguments, result: message.result });
        case 'ended':
          this.endReason = message.reason;
      }
    });
  }

  get open(): boolean {
    return this.socket.readyState === 1;
  }

  /**
   * Caller audio of any length (PCM16 mono at `sampleRate`): whole 20 ms
   * frames are sent, the rest waits for more. A long buffer goes out in
   * messages of at most 32 KB, about a second at 16 kHz (the server closes a
   * message over 64 KB with 1009). The server hears caller audio at real time: what runs more
   * than 2 s ahead is dropped, so a recording is sent paced, as playWavCall does.
   */
  sendAudio(samples: Int16Array): void {
    if (!this.open) return;
    const all = new Int16Array(this.carry.length + samples.length);
    all.set(this.carry);
    all.set(samples, this.carry.length);
    const whole = all.length - (all.length % this.frameSamples);
    const perMessage = this.frameSamples * Math.max(1, Math.floor(MAX_AUDIO_MESSAGE_BYTES / 2 / this.frameSamples));
    for (let at = 0; at < whole; at += perMessage)
      this.socket.send(bytesFromPcm(all.subarray(at, Math.min(whole, at + perMessage))));
    this.carry = all.slice(whole);
  }

  /** Tells the server the audio before `name` has played (only what was heard stays in the agent's history). */
  ackMark(name: string): void {
    this.sendJson({ type: 'mark', name });
  }

  dtmf(digit: string): void {
    this.sendJson({ type: 'dtmf', digit });
  }

  /** Hangs up: the server ends the call and closes the socket. */
  hangUp(): void {
    this.sendJson({ type: 'hangup' });
  }

  /** Closes the socket without a word (the server ends the call as `socket_closed`). */
  close(): void {
    this.socket.close(1000);
  }

  private sendJson(message: Record<string, unknown>): void {
    if (this.open) this.socket.send(JSON.stringify(message));
  }
}

// ---- WAV and PCM helpers (PCM16 little-endian)

export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(bytes.byteLength >> 1);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

export function bytesFromPcm(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i]!, true);
  return out;
}

/** Linear resampling of mono PCM16 (speech quality: what a phone or a test needs). */
export function resamplePcm(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate || samples.length === 0) return samples;
  const out = new Int16Array(Math.max(1, Math.round((samples.length * toRate) / fromRate)));
  const step = fromRate / toRate;
  for (let i = 0; i < out.length; i++) {
    const position = i * step;
    const index = Math.floor(position);
    const a = samples[Math.min(index, samples.length - 1)]!;
    const b = samples[Math.min(index + 1, samples.length - 1)]!;
    out[i] = Math.round(a + (b - a) * (position - index));
  }
  return out;
}

/** Reads a PCM16 WAV file: its first channel and sample rate. */
export function decodeWav(bytes: Uint8Array): { samples: Int16Array; sampleRate: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a WAV file');
  let at = 12;
  let format: { channels: number; sampleRate: number; bits: number; code: number } | null = null;
  while (at + 8 <= bytes.length) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ')
      format = {
        code: view.getUint16(body, true),
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        bits: view.getUint16(body + 14, true),
      };
    if (id === 'data') {
      if (format?.code !== 1 || format.bits !== 16) throw new Error('only PCM16 WAV files are read');
      const end = Math.min(bytes.length, body + size);
      const frames = Math.floor((end - body) / (2 * format.channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) samples[i] = view.getInt16(body + i * 2 * format.channels, true);
      return { samples, sampleRate: format.sampleRate };
    }
    at = body + size + (size % 2);
  }
  throw new Error('WAV file without a data chunk');
}

/** A mono PCM16 WAV file. */
export function encodeWav(samples: Int16Array, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, 36 + samples.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  out.set(bytesFromPcm(samples), 44);
  return out;
}

// ---- the scripted player

export interface PlayWavOptions {
  /** What the caller says, in order: each a WAV file's bytes (any rate; its first channel). Each is spoken once the agent has finished its previous reply. */
  turns: Uint8Array[];
  /** Silence sent after each turn, so the agent hears the caller stop (default 1200 ms). */
  trailingSilenceMs?: number;
  /** Longest wait for the agent's greeting, and for its reply to each turn (default 30 s); then the player goes on. */
  replyTimeoutMs?: number;
  /** After the last reply: hang up (default), or wait for the server to end the call. */
  afterLastTurn?: 'hang_up' | 'wait';
  /** In Node 20 (no global WebSocket): the `ws` package's WebSocket. */
  WebSocket?: WebSocketFactory;
  /** Told each line as heard: a caller line, an agent reply once it has played or been cut. */
  onTranscript?(line: { role: 'agent' | 'caller'; text: string }): void;
}

export interface PlayWavResult {
  transcript: Array<{ role: 'agent' | 'caller'; text: string }>;
  tools: Array<{ name: string; arguments: unknown; result: unknown }>;
  /** How many times the agent was told to stop (barge-in). */
  clears: number;
  ended: WebCallEnd;
  /** Everything the agent said, as a mono PCM16 WAV at the call's rate. */
  agentWav: Uint8Array;
}

/**
 * Plays a scripted caller on a web call: waits for the agent's greeting,
 * speaks each turn at real pace in 20 ms frames, waits for the agent's reply,
 * and hangs up after the last one. Marks are acknowledged when the agent's
 * audio before them would have finished playing (played in real time, as a
 * speaker would); a `clear` drops what was still to play.
 */
export async function playWavCall(
  started: Pick<WebCallStarted, 'url' | 'audio'>,
  options: PlayWavOptions,
): Promise<PlayWavResult> {
  const rate = started.audio.sampleRate;
  const frameMs = started.audio.frameMs;
  const transcript: PlayWavResult['transcript'] = [];
  const tools: PlayWavResult['tools'] = [];
  const received: Int16Array[] = [];
  let clears = 0;
  let playoutEnd = 0;
  const pendingAcks = new Set<ReturnType<typeof setTimeout>>();
  let lineWaiter: (() => void) | null = null;
  const connection = new WebCallConnection(
    started,
    {
      audio: (samples) => {
        received.push(samples);
        playoutEnd = Math.max(Date.now(), playoutEnd) + (samples.length * 1000) / rate;
      },
      mark: (name) => {
        const timer = setTimeout(
          () => {
            pendingAcks.delete(timer);
            connection.ackMark(name);
          },
          Math.max(0, playoutEnd - Date.now()),
        );
        pendingAcks.add(timer);
      },
      clear: () => {
        clears++;
        playoutEnd = Date.now();
        for (const timer of pendingAcks) clearTimeout(timer);
        pendingAcks.clear();
      },
      transcript: (line) => {
        // The lines as heard: an agent reply counts once it has played (or been cut), not as it starts.
        if (!line.final || !line.text) return;
        transcript.push({ role: line.role, text: line.text });
        options.onTranscript?.({ role: line.role, text: line.text });
        if (line.role === 'agent') lineWaiter?.();
      },
      tool: (call) => tools.push(call),
    },
    { WebSocket: options.WebSocket },
  );
  let closed = false;
  void connection.ended.then(() => {
    closed = true;
    lineWaiter?.();
  });
  const timeoutMs = options.replyTimeoutMs ?? 30_000;
  /** Resolves at the next agent line (or the end, or the timeout). */
  const nextAgentLine = () =>
    new Promise<void>((resolve) => {
      if (closed) return resolve();
      const timer = setTimeout(() => done(), timeoutMs);
      const done = () => {
        clearTimeout(timer);
        lineWaiter = null;
        resolve();
      };
      lineWaiter = done;
    });

  await connection.opened;
  const greeting = nextAgentLine();
  await greeting;
  const frame = (rate / 1000) * frameMs;
  for (const wav of options.turns) {
    if (closed) break;
    const decoded = decodeWav(wav);
    const speech = resamplePcm(decoded.samples, decoded.sampleRate, rate);
    const silence = new Int16Array(Math.round(((options.trailingSilenceMs ?? 1200) * rate) / 1000));
    const audio = new Int16Array(speech.length + silence.length);
    audio.set(speech);
    const reply = nextAgentLine();
    const start = Date.now();
    for (let at = 0, n = 1; at < audio.length && !closed; at += frame, n++) {
      connection.sendAudio(audio.subarray(at, at + frame));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + n * frameMs - Date.now())));
    }
    await reply;
    // Let the reply finish playing before the next turn.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, playoutEnd - Date.now())));
  }
  if (!closed && (options.afterLastTurn ?? 'hang_up') === 'hang_up') connection.hangUp();
  const ended = await connection.ended;
  for (const timer of pendingAcks) clearTimeout(timer);
  const total = received.reduce((n, s) => n + s.length, 0);
  const all = new Int16Array(total);
  let offset = 0;
  for (const s of received) {
    all.set(s, offset);
    offset += s.length;
  }
  return { transcript, tools, clears, ended, agentWav: encodeWav(all, rate) };
}
