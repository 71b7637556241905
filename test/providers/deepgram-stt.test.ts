// Deepgram live transcription through the real adapter, over a real
// WebSocket to a local server speaking Deepgram's protocol.
import { createServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import { ProviderFailure } from '../../src/providers/failure.js';
import { DeepgramSpeechToText } from '../../src/providers/speech-to-text/deepgram.js';
import type { RecognitionResult, RecognitionStream } from '../../src/providers/speech-to-text/interface.js';
import { type DeepgramFake, startDeepgramFake } from '../support/deepgram-fake.js';
import { concat, drain, frames, silence, tone, until } from '../support/voice-audio.js';

let fake: DeepgramFake;
const streams: RecognitionStream[] = [];
beforeAll(async () => {
  fake = await startDeepgramFake();
});
afterEach(async () => {
  for (const s of streams.splice(0)) await s.close();
  fake.connections.length = 0;
  fake.transcripts.length = 0;
});
afterAll(() => fake.close());

const open = (
  config: Partial<ConstructorParameters<typeof DeepgramSpeechToText>[0]> = {},
  signal = new AbortController().signal,
) => {
  const stream = new DeepgramSpeechToText({
    apiKey: fake.apiKey,
    apiBase: fake.apiBase,
    endpointingMs: 200,
    ...config,
  }).open({ signal });
  streams.push(stream);
  return stream;
};

/** Collects results into an array as they arrive; `done` settles when the iterator ends or fails. */
function collect(stream: RecognitionStream) {
  const results: RecognitionResult[] = [];
  const done = (async () => {
    try {
      for await (const r of stream.results) results.push(r);
      return null;
    } catch (error) {
      return error;
    }
  })();
  return { results, done };
}

describe('DeepgramSpeechToText', () => {
  it('streams μ-law to /v1/listen with the token and options, and turns Results into interim and final results', async () => {
    fake.transcripts.push('Hello, who is this?');
    const stream = open();
    const seen = collect(stream);
    const speech = concat(silence(100), tone(600), silence(400));
    for (const frame of frames(speech)) stream.write(frame);
    await until(() => seen.results.some((r) => r.final), 5000, 'a final result');

    const connection = fake.connections[0]!;
    expect(connection.authorization).toBe(`Token ${fake.apiKey}`);
    expect(connection.query).toMatchObject({
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      punctuate: 'true',
      endpointing: '200',
    });
    // What Deepgram received decodes to exactly what we wrote, through μ-law.
    expect(Buffer.from(connection.mulaw)).toEqual(Buffer.from(pcmToMulaw(speech)));
    expect(Array.from(mulawToPcm(Uint8Array.from(connection.mulaw)))).toEqual(
      Array.from(mulawToPcm(pcmToMulaw(speech))),
    );

    const interim = seen.results.filter((r) => !r.final);
    expect(interim.length).toBeGreaterThan(0);
    expect(interim[0]).toMatchObject({ text: 'Hello,', final: false, startMs: 100 });
    const final = seen.results.find((r) => r.final)!;
    expect(final).toEqual({
      text: 'Hello, who is this?',
      final: true,
      startMs: 100,
      endMs: 700,
      confidence: 0.98,
      endOfSpeech: true,
    });
  });

  it('endUtterance sends Finalize and yields what Deepgram held; an empty finalize still answers', async () => {
    fake.transcripts.push('I would like to book a meeting.');
    const stream = open({ endpointingMs: 5000 });
    const seen = collect(stream);
    for (const frame of frames(concat(tone(500), silence(100)))) stream.write(frame);
    await until(() => fake.connections[0]?.mulaw.length === 4800, 5000, 'the audio');
    expect(seen.results.filter((r) => r.final)).toEqual([]);
    stream.endUtterance();
    await until(() => seen.results.some((r) => r.final), 5000, 'the finalized result');
    expect(fake.connections[0]!.controls).toContain('Finalize');
    expect(seen.results.find((r) => r.final)).toMatchObject({
      text: 'I would like to book a meeting.',
      final: true,
      startMs: 0,
      endMs: 500,
    });
    expect(seen.results.find((r) => r.final)!.endOfSpeech).toBeUndefined();

    stream.endUtterance();
    await until(() => seen.results.filter((r) => r.final).length === 2, 5000, 'the empty finalize');
    expect(seen.results.filter((r) => r.final)[1]).toMatchObject({ text: '', final: true });
  });

  it('with chunkMs sends whole chunks of audio per message, and what is held before Finalize', async () => {
    fake.transcripts.push('I would like to book a meeting.');
    const stream = open({ endpointingMs: 5000, chunkMs: 60 });
    const seen = collect(stream);
    await until(() => fake.connections.length === 1, 5000, 'the connection');
    await new Promise((r) => setTimeout(r, 50));
    const speech = concat(tone(500), silence(100));
    const all = frames(speech);
    // 600 ms as 30 frames of 20 ms, one write each: 10 messages of 60 ms (480 bytes).
    for (const frame of all) stream.write(frame);
    await until(() => fake.connections[0]!.mulaw.length === 4800, 5000, 'the audio');
    expect(fake.connections[0]!.audioMessages).toEqual(Array(10).fill(480));
    // One frame more is held (less than a chunk) until the cut, then goes before the Finalize.
    stream.write(tone(20));
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.connections[0]!.mulaw.length).toBe(4800);
    stream.endUtterance();
    await until(() => seen.results.some((r) => r.final), 5000, 'the finalized result');
    expect(fake.connections[0]!.audioMessages).toEqual([...Array(10).fill(480), 160]);
    expect(Buffer.from(fake.connections[0]!.mulaw)).toEqual(Buffer.from(pcmToMulaw(concat(speech, tone(20)))));
    expect(fake.connections[0]!.controls).toEqual(['Finalize']);
  });

  it('holds audio and a cut made before the socket opens, and sends them in order once open', async () => {
    fake.transcripts.push('Hello?');
    const stream = open({ endpointingMs: 5000 });
    const seen = collect(stream);
    const early = tone(300);
    stream.write(early);
    stream.endUtterance();
    await until(() => seen.results.some((r) => r.final), 5000, 'the finalized result');
    expect(Buffer.from(fake.connections[0]!.mulaw)).toEqual(Buffer.from(pcmToMulaw(early)));
    expect(fake.connections[0]!.controls).toEqual(['Finalize']);
    expect(seen.results.find((r) => r.final)).toMatchObject({ text: 'Hello?', startMs: 0, endMs: 300 });
  });

  it('sends KeepAlive while no audio flows, and CloseStream on close (the results then end)', async () => {
    const stream = open({ keepAliveMs: 50 });
    const seen = collect(stream);
    await until(
      () => (fake.connections[0]?.controls.filter((c) => c === 'KeepAlive').length ?? 0) >= 2,
      5000,
      'KeepAlive messages',
    );
    await stream.close();
    expect(fake.connections[0]!.controls.at(-1)).toBe('CloseStream');
    expect(await seen.done).toBeNull();
  });

  it('a wrong key fails the results with a ProviderFailure that is not retryable', async () => {
    const stream = open({ apiKey: 'wrong' });
    const { error } = await drain(stream.results);
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({ provider: 'deepgram', retryable: false, message: expect.stringContaining('401') });
    expect(fake.refused).toBeGreaterThan(0);
  });

  it('a dropped socket fails the results with a retryable ProviderFailure; results before the drop are kept', async () => {
    fake.transcripts.push('Can you tell me your opening hours please?');
    const stream = open();
    const seen = collect(stream);
    for (const frame of frames(concat(tone(300), silence(300)))) stream.write(frame);
    await until(() => seen.results.some((r) => r.final), 5000, 'a final result');
    fake.drop();
    const error = await seen.done;
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({ provider: 'deepgram', retryable: true, message: expect.stringContaining('1006') });
    expect(seen.results.find((r) => r.final)?.text).toBe('Can you tell me your opening hours please?');
    // Writing after the failure is harmless.
    stream.write(tone(20));
  });

  it('a NET- close (1011) is retryable, a DATA- close (1008) is not', async () => {
    const a = open();
    await until(() => fake.connections.length === 1, 5000, 'a connection');
    fake.closeAll(1011, 'NET-0001');
    expect((await drain(a.results)).error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('1011 NET-0001'),
    });
    const b = open();
    await until(() => fake.connections.length === 2, 5000, 'a second connection');
    fake.closeAll(1008, 'DATA-0000');
    expect((await drain(b.results)).error).toMatchObject({
      retryable: false,
      message: expect.stringContaining('1008 DATA-0000'),
    });
  });

  it('an unreachable server fails the results; an abort ends them quietly and closes the socket', async () => {
    const down = open({ apiBase: 'ws://127.0.0.1:9' });
    expect((await drain(down.results)).error).toMatchObject({ provider: 'deepgram', retryable: true });

    const controller = new AbortController();
    const stream = open({}, controller.signal);
    const seen = collect(stream);
    await until(() => fake.connections.length === 1, 5000, 'a connection');
    controller.abort();
    expect(await seen.done).toBeNull();
    await until(() => fake.connections[0]!.socket.readyState === 3, 5000, 'the socket to close');
  });

  it('a server that never completes the handshake fails the results after the connect timeout', async () => {
    const held: Socket[] = [];
    let dropped = 0;
    // Reads the upgrade request and never answers it.
    const silent = createServer((socket) => {
      held.push(socket);
      socket.on('close', () => (dropped += 1));
      socket.resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const stream = open({
        apiBase: `ws://127.0.0.1:${(silent.address() as { port: number }).port}`,
        connectTimeoutMs: 300,
      });
      const { error } = await drain(stream.results);
      expect(error).toMatchObject({
        provider: 'deepgram',
        retryable: true,
        message: expect.stringContaining('did not open in time'),
      });
      expect(Date.now() - started).toBeLessThan(3000);
      await until(() => held.length === 1 && dropped === 1, 5000, 'the connection to be dropped');
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
