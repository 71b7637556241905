// The fixed provider delays of the fakes the voice bench (bench/voice.ts) sets:
// the Deepgram fake's final result after the utterance ends, the OpenAI fake's
// first token, the ElevenLabs fake's first audio byte. 0 (the default) answers at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { pcmToMulaw } from '../../src/lib/audio.js';
import { type DeepgramFake, startDeepgramFake } from '../support/deepgram-fake.js';
import { type ElevenLabsFake, startElevenLabsFake } from '../support/elevenlabs-fake.js';
import { type OpenAiFake, startOpenAiFake } from '../support/openai-fake.js';

let deepgram: DeepgramFake;
let openai: OpenAiFake;
let eleven: ElevenLabsFake;
beforeAll(async () => {
  [deepgram, openai, eleven] = await Promise.all([startDeepgramFake(), startOpenAiFake(), startElevenLabsFake()]);
});
afterAll(async () => {
  await Promise.all([deepgram?.close(), openai?.close(), eleven?.close()]);
});

/** Ms from sending an utterance's trailing silence to its final result. */
async function deepgramFinalAfter(): Promise<{ ms: number; text: string }> {
  deepgram.transcripts.push('Hello there.');
  const ws = new WebSocket(`${deepgram.apiBase}/v1/listen?encoding=mulaw&sample_rate=8000&channels=1&endpointing=10`, {
    headers: { authorization: `Token ${deepgram.apiKey}` },
  });
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  const speech = Buffer.from(
    pcmToMulaw(
      Int16Array.from({ length: 8000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / 8000))),
    ),
  );
  const silence = Buffer.from(pcmToMulaw(new Int16Array(1600)));
  const final = new Promise<{ at: number; text: string }>((resolve) =>
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as {
        is_final?: boolean;
        channel?: { alternatives: Array<{ transcript: string }> };
      };
      if (m.is_final) resolve({ at: performance.now(), text: m.channel!.alternatives[0]!.transcript });
    }),
  );
  ws.send(speech);
  const sentAt = performance.now();
  ws.send(silence);
  const { at, text } = await final;
  ws.close();
  return { ms: at - sentAt, text };
}

async function openaiFirstTokenAfter(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${openai.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${openai.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const reader = res.body!.getReader();
  await reader.read();
  const ms = performance.now() - t0;
  await reader.cancel();
  return ms;
}

async function elevenFirstByteAfter(): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(
    `${eleven.apiBase}/v1/text-to-speech/${eleven.voices[0]!.voice_id}/stream?output_format=ulaw_8000`,
    {
      method: 'POST',
      headers: { 'xi-api-key': eleven.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there.' }),
    },
  );
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ms = performance.now() - t0;
  expect(first.value?.length).toBeGreaterThan(0);
  await reader.cancel();
  return ms;
}

describe('provider fakes with fixed delays', () => {
  it('the Deepgram fake sends the final result resultDelayMs after the utterance ends', async () => {
    deepgram.resultDelayMs = 300;
    const delayed = await deepgramFinalAfter();
    expect(delayed.text).toBe('Hello there.');
    expect(delayed.ms).toBeGreaterThanOrEqual(290);
    deepgram.resultDelayMs = 0;
    expect((await deepgramFinalAfter()).ms).toBeLessThan(250);
  });

  it('the OpenAI fake holds the first token firstTokenDelayMs', async () => {
    openai.firstTokenDelayMs = 300;
    expect(await openaiFirstTokenAfter()).toBeGreaterThanOrEqual(290);
    openai.firstTokenDelayMs = 0;
    expect(await openaiFirstTokenAfter()).toBeLessThan(250);
  });

  it('the ElevenLabs fake holds the first audio byte stream.firstByteDelayMs', async () => {
    eleven.stream.firstByteDelayMs = 300;
    expect(await elevenFirstByteAfter()).toBeGreaterThanOrEqual(290);
    eleven.stream.firstByteDelayMs = 0;
    expect(await elevenFirstByteAfter()).toBeLessThan(250);
  });
});
