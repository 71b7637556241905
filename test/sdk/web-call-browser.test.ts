// startBrowserCall's audio handling, with stand-ins for the browser's audio
// objects (an AudioContext whose clock is the wall clock, a microphone
// stream) and a local WebSocket server playing the media server: microphone
// blocks at 48 kHz reach the server as 16 kHz PCM16 in 20 ms frames (silence
// while muted); agent audio is scheduled back to back; a mark is acknowledged
// only once the audio before it has played; `clear` stops what is playing and
// drops the marks still pending; hang-up reaches the server, and the end
// releases the microphone.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startBrowserCall } from '../../sdk/src/web-call-browser.js';
import type { WebSocketFactory } from '../../sdk/src/web-call.js';

class FakeAudioContext {
  readonly sampleRate = 48_000;
  state = 'running';
  readonly destination = {};
  readonly started: Array<{ at: number; duration: number; stopped: boolean }> = [];
  processor: { onaudioprocess: ((event: unknown) => void) | null } | null = null;
  closed = false;
  private readonly t0 = performance.now();
  get currentTime() {
    return (performance.now() - this.t0) / 1000;
  }
  async resume() {}
  async close() {
    this.closed = true;
  }
  createBuffer(_channels: number, length: number, rate: number) {
    const data = new Float32Array(length);
    return { duration: length / rate, getChannelData: () => data };
  }
  createBufferSource() {
    const entry = { at: 0, duration: 0, stopped: false };
    const node = {
      buffer: null as { duration: number } | null,
      onended: null as (() => void) | null,
      connect: () => {},
      start: (at: number) => {
        entry.at = at;
        entry.duration = node.buffer!.duration;
        this.started.push(entry);
      },
      stop: () => void (entry.stopped = true),
    };
    return node;
  }
  createMediaStreamSource() {
    return { connect: () => {}, disconnect: () => {} };
  }
  createScriptProcessor() {
    this.processor = { onaudioprocess: null, connect: () => {}, disconnect: () => {} } as never;
    return this.processor;
  }
}

let server: WebSocketServer | null = null;
afterEach(() => server?.close());

async function mediaServer() {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server!.once('listening', resolve));
  const connected = new Promise<WebSocket>((resolve) => server!.once('connection', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/media/web?token=t`;
  return { url, connected };
}

const frame = (ms: number) => Buffer.alloc((16_000 * ms * 2) / 1000, 1);

describe('startBrowserCall (stand-in audio objects, a real socket)', () => {
  it('sends the microphone at 16 kHz in 20 ms frames, plays the agent back to back, acknowledges marks once played, honours clear, hangs up', async () => {
    const { url, connected } = await mediaServer();
    const context = new FakeAudioContext();
    const stopped: string[] = [];
    const stream = { getTracks: () => [{ stop: () => stopped.push('track') }] };
    const clears: number[] = [];
    const call = await startBrowserCall(
      { url, audio: { encoding: 'pcm16le', sampleRate: 16_000, frameMs: 20 } },
      {
        stream: stream as never,
        audioContext: context as never,
        WebSocket: WebSocket as unknown as WebSocketFactory,
        onClear: () => clears.push(1),
      },
    );
    const media = await connected;
    const binary: Buffer[] = [];
    const text: Array<Record<string, unknown>> = [];
    media.on('message', (data, isBinary) =>
      isBinary ? binary.push(data as Buffer) : text.push(JSON.parse(String(data))),
    );

    // Microphone: 48 kHz float blocks, as a ScriptProcessor delivers them.
    const block = Float32Array.from({ length: 2048 }, (_, i) => 0.5 * Math.sin(i / 10));
    const process = (input: Float32Array) =>
      context.processor!.onaudioprocess!({
        inputBuffer: { getChannelData: () => input },
        outputBuffer: { getChannelData: () => new Float32Array(2048) },
      });
    for (let i = 0; i < 6; i++) process(block);
    call.setMuted(true);
    process(block);
    await vi.waitFor(() => expect(binary.reduce((n, b) => n + b.length, 0)).toBeGreaterThanOrEqual(640 * 12));
    expect(binary.every((b) => b.length % 640 === 0)).toBe(true);
    // 7 blocks of 2048 at 48 kHz are about 4,779 samples at 16 kHz: whole 320-sample frames of them were sent.
    const samples = Buffer.concat(binary);
    expect(samples.length / 2).toBe(Math.floor(4778 / 320) * 320);
    expect(Math.abs(samples.readInt16LE(200 * 2))).toBeGreaterThan(1000);
    expect(samples.readInt16LE(samples.length - 2)).toBe(0); // muted: silence

    // Agent: 600 ms of audio, then a mark: acknowledged only once the 600 ms have played.
    const sentAt = Date.now();
    for (let i = 0; i < 30; i++) media.send(frame(20));
    media.send(JSON.stringify({ type: 'mark', name: 'm1' }));
    await vi.waitFor(() => expect(text).toContainEqual({ type: 'mark', name: 'm1' }), { timeout: 3000 });
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(550);
    expect(context.started).toHaveLength(30);
    for (let i = 1; i < 30; i++) expect(context.started[i]!.at).toBeCloseTo(context.started[i - 1]!.at + 0.02, 5);

    // Barge-in: 2 s more audio and a mark, then clear: playback stops, the mark is never acknowledged.
    for (let i = 0; i < 100; i++) media.send(frame(20));
    media.send(JSON.stringify({ type: 'mark', name: 'm2' }));
    media.send(JSON.stringify({ type: 'clear' }));
    await vi.waitFor(() => expect(clears).toHaveLength(1));
    expect(context.started.slice(30).every((s) => s.stopped)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2300));
    expect(text.filter((m) => m.type === 'mark').map((m) => m.name)).toEqual(['m1']);

    call.hangUp();
    await vi.waitFor(() => expect(text).toContainEqual({ type: 'hangup' }));
    media.send(JSON.stringify({ type: 'ended', reason: 'caller_hung_up' }));
    media.close(1000);
    expect(await call.ended).toEqual({ reason: 'caller_hung_up', code: 1000 });
    // The caller's own stream and context are theirs to stop; only the processor was released.
    expect(context.processor!.onaudioprocess).toBeNull();
    expect(stopped).toEqual([]);
    expect(context.closed).toBe(false);
  }, 20_000);
});
