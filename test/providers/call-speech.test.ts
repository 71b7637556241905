// Speech for live calls: ElevenLabs streamed as μ-law 8 kHz from a local
// server speaking ElevenLabs' API, and the local espeak-ng voice resampled
// to 8 kHz; both yield PCM16 8 kHz chunks.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../src/http/errors.js';
import { decodeWav, mulawToPcm, resample } from '../../src/lib/audio.js';
import { ElevenLabsCallSpeech } from '../../src/providers/call-speech/elevenlabs.js';
import { LocalCallSpeech } from '../../src/providers/call-speech/local.js';
import { ProviderFailure } from '../../src/providers/failure.js';
import { ElevenLabsVoiceProvider } from '../../src/providers/voice/elevenlabs.js';
import { LocalSpeechProvider } from '../../src/providers/voice/local.js';
import { type ElevenLabsFake, startElevenLabsFake } from '../support/elevenlabs-fake.js';
import { concat, drain, until } from '../support/voice-audio.js';

let fake: ElevenLabsFake;
const local = new LocalSpeechProvider();
beforeAll(async () => {
  fake = await startElevenLabsFake();
});
afterEach(() => {
  Object.assign(fake.stream, { chunkBytes: 400, delayMs: 5, failWith: null, after: 'end', afterBytes: null });
  fake.requests.length = 0;
});
afterAll(async () => {
  await local.close();
  await fake.close();
});

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const eleven = (apiKey = fake.apiKey) =>
  new ElevenLabsCallSpeech(new ElevenLabsVoiceProvider({ apiKey, apiBase: fake.apiBase }));
const signal = () => new AbortController().signal;

describe('ElevenLabsCallSpeech', () => {
  it('streams /v1/text-to-speech/{voice}/stream as ulaw_8000 and yields the decoded samples chunk by chunk', async () => {
    const text = 'Hello, thanks for calling us today.';
    const { values, error } = await drain(
      eleven().synthesize(text, { provider: 'elevenlabs', voiceId: RACHEL }, signal()),
    );
    expect(error).toBeNull();
    expect(values.length).toBeGreaterThan(1);
    // Exactly the μ-law the server sent, decoded (each byte one sample at 8 kHz).
    expect(Array.from(concat(...values))).toEqual(Array.from(mulawToPcm(fake.ulawFor(text))));
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: `/v1/text-to-speech/${RACHEL}/stream`,
      query: { output_format: 'ulaw_8000' },
      apiKey: fake.apiKey,
      body: { text, model_id: 'eleven_flash_v2_5' },
    });
  });

  it("uses the persona's model, and yields the first chunk before the stream ends", async () => {
    fake.stream.delayMs = 60;
    const iterator = eleven()
      .synthesize(
        'One two three four five six',
        { provider: 'elevenlabs', voiceId: RACHEL, settings: { modelId: 'eleven_turbo_v2_5' } },
        signal(),
      )
      [Symbol.asyncIterator]();
    const started = Date.now();
    await iterator.next();
    const first = Date.now() - started;
    while (!(await iterator.next()).done);
    expect(first).toBeLessThan(Date.now() - started - 300);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model_id: 'eleven_turbo_v2_5' });
  });

  it('refusals (wrong key, unknown voice) are not retryable; 429 and 500 are', async () => {
    const wrongKey = await drain(
      eleven('wrong').synthesize('Hi', { provider: 'elevenlabs', voiceId: RACHEL }, signal()),
    );
    expect(wrongKey.error).toBeInstanceOf(ProviderFailure);
    expect(wrongKey.error).toMatchObject({
      provider: 'elevenlabs',
      retryable: false,
      message: expect.stringContaining('HTTP 401: Invalid API key'),
    });
    const unknown = await drain(eleven().synthesize('Hi', { provider: 'elevenlabs', voiceId: 'nope' }, signal()));
    expect(unknown.error).toMatchObject({ retryable: false, message: expect.stringContaining('HTTP 404') });
    for (const status of [429, 500]) {
      fake.stream.failWith = status;
      expect(
        (await drain(eleven().synthesize('Hi', { provider: 'elevenlabs', voiceId: RACHEL }, signal()))).error,
      ).toMatchObject({ retryable: true, message: expect.stringContaining(`HTTP ${status}`) });
    }
    const down = new ElevenLabsCallSpeech(
      new ElevenLabsVoiceProvider({ apiKey: fake.apiKey, apiBase: 'http://127.0.0.1:9' }),
    );
    expect(
      (await drain(down.synthesize('Hi', { provider: 'elevenlabs', voiceId: RACHEL }, signal()))).error,
    ).toMatchObject({ provider: 'elevenlabs', retryable: true });
  });

  it('a stream dropped midway fails retryably after the audio that came', async () => {
    Object.assign(fake.stream, { after: 'drop', afterBytes: 800, chunkBytes: 400 });
    const { values, error } = await drain(
      eleven().synthesize('one two three four', { provider: 'elevenlabs', voiceId: RACHEL }, signal()),
    );
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({ provider: 'elevenlabs', retryable: true });
    expect(concat(...values).length).toBe(800);
  });

  it('a stalled stream ends quietly when the caller aborts (barge-in), releasing the connection', async () => {
    Object.assign(fake.stream, { after: 'stall', afterBytes: 400 });
    const controller = new AbortController();
    const chunks: Int16Array[] = [];
    const done = drain(
      (async function* () {
        for await (const c of eleven().synthesize(
          'one two three',
          { provider: 'elevenlabs', voiceId: RACHEL },
          controller.signal,
        )) {
          chunks.push(c);
          yield c;
        }
      })(),
    );
    await until(() => chunks.length === 1, 5000, 'the first chunk');
    controller.abort();
    expect((await done).error).toBeNull();
    await until(() => fake.openStreams() === 0, 5000, 'the stream to close');
  });
});

describe('LocalCallSpeech', () => {
  it('speaks with espeak-ng and yields its 22,050 Hz WAV resampled to 8 kHz, in chunks', async () => {
    const text = 'Hello, who is this?';
    const { values, error } = await drain(
      new LocalCallSpeech(local).synthesize(
        text,
        { provider: 'local', voiceId: 'en-us', settings: { speed: 160 } },
        signal(),
      ),
    );
    expect(error).toBeNull();
    const wav = decodeWav((await local.synthesize(text, { type: 'local', voiceId: 'en-us', speed: 160 })).bytes);
    expect(wav.sampleRate).toBe(22050);
    const expected = resample(wav.samples, 22050, 8000);
    expect(values.length).toBeGreaterThan(1);
    expect(values.every((c) => c.length <= 1600)).toBe(true);
    expect(Array.from(concat(...values))).toEqual(Array.from(expected));
    const pcm = concat(...values);
    const rms = Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length);
    expect(rms).toBeGreaterThan(500);
    expect(pcm.length / 8000).toBeGreaterThan(0.5);
  });

  it('speaks an ElevenLabs voice (a fallback) with the default local voice; bad local settings are a refusal', async () => {
    const fallback = await drain(
      new LocalCallSpeech(local).synthesize(
        'Sorry about that.',
        { provider: 'elevenlabs', voiceId: RACHEL, settings: { modelId: 'x' } },
        signal(),
      ),
    );
    expect(fallback.error).toBeNull();
    expect(concat(...fallback.values).length).toBeGreaterThan(4000);
    const bad = await drain(
      new LocalCallSpeech(local).synthesize('Hi', { provider: 'local', voiceId: '-w /tmp/x' }, signal()),
    );
    expect(bad.error).toBeInstanceOf(ProviderFailure);
    expect(bad.error).toMatchObject({ provider: 'espeak-ng', retryable: false });
  });

  it('an aborted request yields nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(
      await drain(
        new LocalCallSpeech(local).synthesize('Hello', { provider: 'local', voiceId: 'en-us' }, controller.signal),
      ),
    ).toEqual({ values: [], error: null });
  });

  it("asks local speech as a call (ahead of previews), so previews filling the queue's preview room do not refuse it", async () => {
    const speech = new LocalSpeechProvider({ binary: null, maxPreviews: 1, maxPreviewsPerAccount: 1 });
    try {
      const settings = { type: 'local', voiceId: 'en-us' };
      const previews = ['a', 'b'].map((account) =>
        speech.synthesize('a preview', settings, { priority: 'preview', account }).then(
          (audio) => audio.contentType,
          (e: AppError) => e.code,
        ),
      );
      const { values, error } = await drain(
        new LocalCallSpeech(speech).synthesize('The call goes on.', { provider: 'local', voiceId: 'en-us' }, signal()),
      );
      expect(error).toBeNull();
      expect(values.length).toBeGreaterThan(0);
      expect(await Promise.all(previews)).toEqual(['audio/wav', 'rate_limited']);
    } finally {
      await speech.close();
    }
  });

  it('gives every call room of its own: twelve calls greeting at once are all spoken (past the 8 jobs of spare room)', async () => {
    // One job at a time (the WebAssembly worker), so the greetings really queue; each call speaks through its own binding.
    const speech = new LocalSpeechProvider({ binary: null });
    try {
      const shared = new LocalCallSpeech(speech);
      const greetings = Array.from({ length: 12 }, (_, i) =>
        drain(
          shared
            .forCall(`call-${i}`)
            .synthesize(`Hello caller ${i}.`, { provider: 'local', voiceId: 'en-us' }, signal()),
        ),
      );
      expect(speech.queue.size().calls).toBe(12); // all waiting at once
      const spoken = await Promise.all(greetings);
      expect(spoken.map((g) => g.error)).toEqual(Array(12).fill(null));
      expect(spoken.every((g) => concat(...g.values).length > 4000)).toBe(true);
    } finally {
      await speech.close();
    }
  });
});
