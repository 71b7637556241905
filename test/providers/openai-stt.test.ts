// OpenAI-compatible transcription through the real adapter: one multipart
// request per utterance to a local server speaking the OpenAI API.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../src/lib/audio.js';
import { ProviderFailure } from '../../src/providers/failure.js';
import type { RecognitionResult, RecognitionStream } from '../../src/providers/speech-to-text/interface.js';
import { OpenAiSpeechToText } from '../../src/providers/speech-to-text/openai.js';
import { type OpenAiFake, startOpenAiFake } from '../support/openai-fake.js';
import { concat, drain, frames, silence, tone, until } from '../support/voice-audio.js';

let fake: OpenAiFake;
const streams: RecognitionStream[] = [];
beforeAll(async () => {
  fake = await startOpenAiFake();
});
afterEach(async () => {
  for (const s of streams.splice(0)) await s.close();
  fake.transcriptions.length = 0;
  fake.transcripts.length = 0;
  fake.transcriptionFailures.length = 0;
});
afterAll(() => fake.close());

const open = (
  config: Partial<ConstructorParameters<typeof OpenAiSpeechToText>[0]> = {},
  signal = new AbortController().signal,
) => {
  const stream = new OpenAiSpeechToText({ url: fake.url, apiKey: fake.apiKey, model: 'whisper-1', ...config }).open({
    signal,
  });
  streams.push(stream);
  return stream;
};

async function next(iterator: AsyncIterator<RecognitionResult>): Promise<RecognitionResult> {
  const { value, done } = await iterator.next();
  if (done) throw new Error('the results ended');
  return value;
}

describe('OpenAiSpeechToText', () => {
  it('sends each utterance as a 16-bit WAV with model and key, one request per endUtterance, results in order', async () => {
    fake.transcripts.push('Hello, who is this?', 'No thank you, goodbye.');
    const stream = open();
    const results = stream.results[Symbol.asyncIterator]();
    const first = concat(tone(400), silence(100));
    stream.startUtterance();
    for (const frame of frames(first)) stream.write(frame);
    expect(fake.transcriptions).toHaveLength(0);
    stream.endUtterance();
    const second = tone(300, 300);
    stream.startUtterance();
    stream.write(second);
    stream.endUtterance();

    expect(await next(results)).toEqual({ text: 'Hello, who is this?', final: true, startMs: 0, endMs: 500 });
    expect(await next(results)).toEqual({ text: 'No thank you, goodbye.', final: true, startMs: 500, endMs: 800 });
    expect(fake.transcriptions).toHaveLength(2);
    const request = fake.transcriptions[0]!;
    expect(request.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(request.fields).toEqual({ model: 'whisper-1', response_format: 'json' });
    expect(request).toMatchObject({ filename: 'utterance.wav', fileContentType: 'audio/wav', wavError: null });
    // The WAV holds exactly the utterance, upsampled to 16 kHz for Whisper.
    expect(request.wav).toMatchObject({ format: 1, channels: 1, sampleRate: 16000, bitsPerSample: 16 });
    expect(Array.from(request.wav!.samples)).toEqual(Array.from(resample(first, 8000, 16000)));
    expect(Array.from(fake.transcriptions[1]!.wav!.samples)).toEqual(Array.from(resample(second, 8000, 16000)));
  });

  it("sends a browser call's 16 kHz utterance as it came, not through the phone band", async () => {
    fake.transcripts.push('Hello from the browser.');
    const stt = new OpenAiSpeechToText({ url: fake.url, apiKey: fake.apiKey, model: 'whisper-1' });
    expect(stt.wideband).toBe(true);
    const stream = stt.open({ signal: new AbortController().signal, sampleRate: 16000 });
    streams.push(stream);
    const results = stream.results[Symbol.asyncIterator]();
    // 6 kHz: above the phone band, gone after 8 kHz and back.
    const wide = Int16Array.from({ length: 16000 }, (_, i) =>
      Math.round(6000 * Math.sin((2 * Math.PI * 6000 * i) / 16000)),
    );
    stream.startUtterance();
    for (const frame of frames(wide, 320)) stream.write(frame);
    stream.endUtterance();
    expect(await next(results)).toEqual({ text: 'Hello from the browser.', final: true, startMs: 0, endMs: 1000 });
    expect(fake.transcriptions[0]!.wav!.sampleRate).toBe(16000);
    expect(Array.from(fake.transcriptions[0]!.wav!.samples)).toEqual(Array.from(wide));
  });

  it('holds only the last 60 s of an utterance that never ends: a caller who never pauses cannot grow the call without end', async () => {
    fake.transcripts.push('a very long one');
    const stream = open();
    const results = stream.results[Symbol.asyncIterator]();
    stream.startUtterance();
    for (let i = 0; i < 90 * 50; i++) stream.write(new Int16Array(160).fill(1000));
    stream.endUtterance();
    expect(await next(results)).toEqual({ text: 'a very long one', final: true, startMs: 30_000, endMs: 90_000 });
    expect(fake.transcriptions[0]!.wav!.samples.length).toBe(60 * 16000);
  });

  it('answers an empty utterance with an empty final result without a request', async () => {
    const stream = open();
    const results = stream.results[Symbol.asyncIterator]();
    stream.endUtterance();
    expect(await next(results)).toEqual({ text: '', final: true, startMs: 0, endMs: 0 });
    expect(fake.transcriptions).toHaveLength(0);
  });

  it('a refused key fails the results with a ProviderFailure that is not retryable', async () => {
    const stream = open({ apiKey: 'sk-wrong' });
    stream.startUtterance();
    stream.write(tone(200));
    stream.endUtterance();
    const { error } = await drain(stream.results);
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({
      provider: 'openai',
      retryable: false,
      message: expect.stringContaining('HTTP 401: Incorrect API key'),
    });
  });

  it('500 and 429 are retryable failures; an unreachable server too', async () => {
    for (const status of [500, 429]) {
      fake.transcriptionFailures.push(status);
      const stream = open();
      stream.startUtterance();
      stream.write(tone(100));
      stream.endUtterance();
      expect((await drain(stream.results)).error).toMatchObject({
        provider: 'openai',
        retryable: true,
        message: expect.stringContaining(`HTTP ${status}`),
      });
    }
    const down = open({ url: 'http://127.0.0.1:9/v1' });
    down.startUtterance();
    down.write(tone(100));
    down.endUtterance();
    expect((await drain(down.results)).error).toMatchObject({
      provider: 'openai',
      retryable: true,
      message: expect.stringContaining('request failed'),
    });
  });

  it('an abort ends the results quietly and sends nothing more', async () => {
    const controller = new AbortController();
    const stream = open({}, controller.signal);
    controller.abort();
    stream.startUtterance();
    stream.write(tone(100));
    stream.endUtterance();
    expect(await drain(stream.results)).toEqual({ values: [], error: null });
    await until(() => true);
    expect(fake.transcriptions).toHaveLength(0);
  });
});
