// ElevenLabs voices and speech through the real adapter, against a local
// server speaking ElevenLabs' API.
import { compactDecrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { ElevenLabsVoiceProvider } from '../../src/providers/voice/elevenlabs.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type ElevenLabsFake, startElevenLabsFake } from '../support/elevenlabs-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';
import { privateKeyOf, registerServer, signPayload } from '../support/signed-payloads.js';

let fake: ElevenLabsFake;
let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  fake = await startElevenLabsFake();
  t = await createTestApp({ env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_API_BASE: fake.apiBase } });
  user = await createVerifiedUser(t);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer(user.token) });

describe('ElevenLabsVoiceProvider', () => {
  it('lists voices with the xi-api-key header; a refused key gives null', async () => {
    const voices = await new ElevenLabsVoiceProvider({ apiKey: fake.apiKey, apiBase: fake.apiBase }).listVoices();
    expect(voices).toEqual([
      {
        voiceId: '21m00Tcm4TlvDq8ikWAM',
        name: 'Rachel',
        description: null,
        category: 'premade',
        labels: { accent: 'american', gender: 'female', age: 'young' },
        previewUrl: 'https://example.com/rachel.mp3',
      },
      {
        voiceId: 'AZnzlk1XvdvUeBnXmlld',
        name: 'Domi',
        description: 'Strong and confident.',
        category: 'premade',
        labels: { accent: 'american', gender: 'female' },
        previewUrl: 'https://example.com/domi.mp3',
      },
    ]);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/voices', apiKey: fake.apiKey });
    expect(await new ElevenLabsVoiceProvider({ apiKey: 'wrong', apiBase: fake.apiBase }).listVoices()).toBeNull();
  });

  it('posts text and model to /v1/text-to-speech/{voiceId} and returns the MP3 bytes', async () => {
    const audio = await new ElevenLabsVoiceProvider({ apiKey: fake.apiKey, apiBase: fake.apiBase }).synthesize(
      'Hello there',
      { type: 'elevenlabs', voiceId: 'AZnzlk1XvdvUeBnXmlld' },
    );
    expect(audio.contentType).toBe('audio/mpeg');
    expect(Buffer.from(audio.bytes)).toEqual(fake.audioFor('Hello there'));
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/text-to-speech/AZnzlk1XvdvUeBnXmlld',
      query: { output_format: 'mp3_44100_128' },
      apiKey: fake.apiKey,
      accept: 'audio/mpeg',
      body: { text: 'Hello there', model_id: 'eleven_multilingual_v2' },
    });
  });

  it('turns refusals and an unreachable API into provider_error (502)', async () => {
    const provider = new ElevenLabsVoiceProvider({ apiKey: fake.apiKey, apiBase: fake.apiBase });
    const unknownVoice = await provider
      .synthesize('x', { type: 'elevenlabs', voiceId: 'nope' })
      .catch((e: unknown) => e);
    expect(unknownVoice).toBeInstanceOf(AppError);
    expect(unknownVoice).toMatchObject({
      code: 'provider_error',
      message: expect.stringContaining('voice_id was not found'),
    });
    const down = new ElevenLabsVoiceProvider({ apiKey: fake.apiKey, apiBase: 'http://127.0.0.1:9' });
    await expect(down.listVoices()).rejects.toMatchObject({ code: 'provider_error' });
  });
});

describe('ElevenLabs personas', () => {
  it('list-external converts the voices to personas', async () => {
    const res = await get('/api/persona/list-external');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      expect.objectContaining({
        id: 'elevenlabs-21m00Tcm4TlvDq8ikWAM',
        name: 'Rachel',
        description: 'Rachel: female, young, american',
        settings: expect.objectContaining({ type: 'elevenlabs', voiceId: '21m00Tcm4TlvDq8ikWAM' }),
      }),
      expect.objectContaining({
        id: 'elevenlabs-AZnzlk1XvdvUeBnXmlld',
        name: 'Domi',
        description: 'Strong and confident.',
      }),
    ]);
    const all = (await get('/api/personas')).json().map((p: { id: string }) => p.id);
    expect(all).toContain('local-amy');
    expect(all).toContain('elevenlabs-AZnzlk1XvdvUeBnXmlld');
    expect((await get('/api/persona/elevenlabs-AZnzlk1XvdvUeBnXmlld')).json().name).toBe('Domi');
  });

  it('list-external is [] when ElevenLabs refuses the key', async () => {
    const refused = await createTestApp({
      env: { ELEVENLABS_API_KEY: 'not-the-key', ELEVENLABS_API_BASE: fake.apiBase },
    });
    try {
      const u = await createVerifiedUser(refused);
      const res = await refused.app.inject({
        method: 'GET',
        url: '/api/persona/list-external',
        headers: bearer(u.token),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
      expect(
        (
          await refused.app.inject({
            method: 'GET',
            url: '/api/persona/elevenlabs-AZnzlk1XvdvUeBnXmlld',
            headers: bearer(u.token),
          })
        ).statusCode,
      ).toBe(404);
    } finally {
      await refused.close();
    }
  });

  it('play speaks through ElevenLabs and answers MP3 encrypted to the registered server', async () => {
    const server = await registerServer(t, user);
    const jwt = await signPayload(
      server,
      { use: 'persona-preview', textBase64: Buffer.from('Bonjour, ici Domi.').toString('base64') },
      { now: t.clock.now() },
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/persona/elevenlabs-AZnzlk1XvdvUeBnXmlld/play',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode).toBe(200);
    const { header, content } = res.json();
    expect(header).toMatchObject({ cty: 'audio/mpeg', contentType: 'audio/mpeg' });
    const { plaintext } = await compactDecrypt(content, privateKeyOf(server));
    expect(Buffer.from(plaintext)).toEqual(fake.audioFor('Bonjour, ici Domi.'));
  });
});
