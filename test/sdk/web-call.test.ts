// The SDK's web calls against a real server: client.calls.startWeb, then
// playWavCall speaks WAV files written by flite (16 kHz, as a scripted test
// would record them) to the agent in paced 20 ms frames, acknowledges marks
// as its audio plays, collects the transcript and tool calls, and returns the
// agent's audio as a WAV file. The sandbox dialogue engine answers from a
// knowledge base and says goodbye; the call ends with the agent's reason.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  WorkspaceApiError,
  WorkspaceClient,
  decodeWav,
  encodeWav,
  playWavCall,
  resamplePcm,
  WebCallConnection,
  type WebSocketFactory,
  type WebSocketLike,
} from '../../sdk/src/index.js';
import { findBinary } from '../../src/providers/speech-to-text/pocketsphinx.js';
import { createPocketsphinxSpeechToText } from '../../src/providers/speech-to-text/pocketsphinx.js';
import { callConfig } from '../modules/calls/support.js';
import { WallClock, clinicKnowledge } from '../modules/calls/web-call-support.js';
import { freePort } from '../support/ports.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { createVerifiedUser } from '../support/factories.js';
import { parseWav } from '../support/wav.js';

const flite = findBinary('flite') !== null;
const pocketsphinx = createPocketsphinxSpeechToText() !== null;

describe('SDK: PCM and WAV helpers', () => {
  it('writes and reads a mono PCM16 WAV, and resamples', () => {
    const samples = Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    const wav = encodeWav(samples, 8000);
    const parsed = parseWav(wav);
    expect(parsed).toMatchObject({ format: 1, channels: 1, sampleRate: 8000, bitsPerSample: 16 });
    expect(decodeWav(wav)).toEqual({ samples, sampleRate: 8000 });
    const up = resamplePcm(samples, 8000, 16000);
    expect(up.length).toBe(1600);
    expect(up[2]).toBe(samples[1]);
    expect(() => decodeWav(new Uint8Array(20))).toThrow(/not a WAV/);
  });
});

describe('SDK: WebCallConnection.sendAudio', () => {
  /** A socket that is open at once and keeps what is sent. */
  class RecordingSocket implements WebSocketLike {
    static last: RecordingSocket;
    binaryType = 'blob';
    readyState = 1;
    sent: Uint8Array[] = [];
    constructor() {
      RecordingSocket.last = this;
    }
    send(data: string | ArrayBufferLike | ArrayBufferView) {
      this.sent.push(new Uint8Array((data as Uint8Array).slice()));
    }
    close() {}
    addEventListener() {}
  }

  it('sends a long buffer in whole 20 ms frames, in messages the server accepts (at most 32 KB), the rest kept for later', () => {
    const connection = new WebCallConnection(
      { url: 'ws://127.0.0.1:1/api/media/web', audio: { encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 } },
      {},
      { WebSocket: RecordingSocket as unknown as WebSocketFactory },
    );
    // 5 s and 10 samples: 160 KB in one call, where one message over 64 KB is closed with 1009.
    const samples = Int16Array.from({ length: 5 * 16000 + 10 }, (_, i) => (i * 7) % 30000);
    connection.sendAudio(samples);
    const sent = RecordingSocket.last.sent;
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((m) => m.byteLength <= 32 * 1024 && m.byteLength % 640 === 0)).toBe(true);
    const joined = Buffer.concat(sent);
    expect(joined.byteLength).toBe(5 * 16000 * 2);
    // The same samples, in order; the 10 over the last whole frame go out with the next call.
    const view = new DataView(joined.buffer, joined.byteOffset, joined.byteLength);
    expect(Array.from({ length: 5 * 16000 }, (_, i) => view.getInt16(i * 2, true))).toEqual(
      Array.from(samples.subarray(0, 5 * 16000)),
    );
    connection.sendAudio(new Int16Array(310));
    expect(sent.at(-1)!.byteLength).toBe(640);
  });
});

describe.skipIf(!flite)('SDK: a web call played from WAV files (Node)', () => {
  let t: TestApp;
  let baseUrl: string;
  let dir: string;
  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    // No reprompt: on a loaded machine (CI's real-time group) recognising the question once took longer than
    // the 8 s after which the agent asks "Are you still there?", and this test is about playing a call.
    t = await createTestApp({
      clock: new WallClock(),
      env: { PORT: String(port), VOICE_REPROMPT_MS: '120000' },
      config: { ...callConfig(), publicUrl: baseUrl },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    dir = mkdtempSync(join(tmpdir(), 'sdk-web-call-'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('startWeb, then playWavCall: the agent greets, answers from the knowledge base, says goodbye and ends the call; its audio comes back as a WAV file', async () => {
    const user = await createVerifiedUser(t);
    const kbId = await clinicKnowledge(t, user);
    const client = new WorkspaceClient({ baseUrl, token: user.token });
    // What a scripted test records once: the caller's lines as WAV files (flite's slt voice is 16 kHz).
    // No comma in the last line: flite's pause there is long enough for the turn to end between "no thank you" and "goodbye".
    const lines = ['Can you tell me your opening hours please?', 'No thank you goodbye.'];
    const files = lines.map((line, i) => {
      const file = join(dir, `line-${i}.wav`);
      execFileSync('flite', ['-voice', 'slt', '-t', line, '-o', file]);
      return file;
    });

    const started = await client.calls.startWeb({
      agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
      knowledgeBaseId: kbId,
    });
    expect(started.audio).toEqual({ encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 });
    const result = await playWavCall(started, {
      turns: files.map((f) => readFileSync(f)),
      WebSocket: WebSocket as unknown as WebSocketFactory,
    });
    const out = join(dir, 'agent.wav');
    writeFileSync(out, result.agentWav);

    expect(result.transcript[0]).toEqual({ role: 'agent', text: 'Hello, this is Amy from the clinic.' });
    const agentLines = result.transcript.filter((l) => l.role === 'agent').map((l) => l.text);
    if (pocketsphinx) {
      expect(agentLines[1]).toContain('Monday to Friday');
      expect(result.tools.map((c) => c.name)).toEqual(['search_knowledge', 'end_call']);
      expect(agentLines[2]).toBe('Thank you for calling. Goodbye!');
      // The agent hung up after its goodbye had played.
      expect(result.ended).toEqual({ reason: 'agent_ended', code: 1000 });
    } else {
      expect(result.transcript.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual([
        '(speech not recognised)',
        '(speech not recognised)',
      ]);
      expect(result.ended.code).toBe(1000);
    }
    // Everything the agent said, at the call's rate: several seconds of speech.
    const wav = parseWav(readFileSync(out));
    expect(wav).toMatchObject({ channels: 1, sampleRate: 16000, bitsPerSample: 16 });
    expect(wav.durationSeconds).toBeGreaterThan(pocketsphinx ? 6 : 3);
    expect(wav.rms).toBeGreaterThan(300);

    // The call page agrees.
    const call = await client.calls.get(started.sessionId);
    expect(call).toMatchObject({ id: started.sessionId, direction: 'web' });

    // A second player on the same URL is refused: the token was spent.
    const again = await playWavCall(started, {
      turns: [],
      WebSocket: WebSocket as unknown as WebSocketFactory,
      replyTimeoutMs: 2000,
    });
    expect(again.ended.code).toBe(1008);
    expect(again.transcript).toEqual([]);
  }, 120_000);

  it('sendAudio of 3 s at once to a real server: the socket is not closed (no 1009), the call goes on until hung up', async () => {
    const user = await createVerifiedUser(t);
    const client = new WorkspaceClient({ baseUrl, token: user.token });
    const started = await client.calls.startWeb({ agent: { name: 'Amy', firstMessage: 'Hello.' } });
    const connection = new WebCallConnection(started, {}, { WebSocket: WebSocket as unknown as WebSocketFactory });
    await connection.opened;
    // 96 KB of quiet noise in one call: one message would be over the server's 64 KB.
    connection.sendAudio(Int16Array.from({ length: 3 * 16000 }, (_, i) => ((i * 7919) % 200) - 100));
    // The server reads messages in order: a message too big would close the socket (1009) before the hang-up is read.
    connection.hangUp();
    expect(await connection.ended).toEqual({ reason: 'caller_hung_up', code: 1000 });
  }, 60_000);

  it("startWeb refusals are WorkspaceApiErrors with the server's code", async () => {
    const user = await createVerifiedUser(t);
    const client = new WorkspaceClient({ baseUrl, token: user.token });
    const err = await client.calls.startWeb({ agentId: 'no-such-agent' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkspaceApiError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
    await client.calls.startWeb({ agent: { name: 'A' } });
    await client.calls.startWeb({ agent: { name: 'B' } });
    expect(await client.calls.startWeb({ agent: { name: 'C' } }).catch((e: unknown) => e)).toMatchObject({
      status: 429,
      code: 'too_many_calls',
    });
  });
});
