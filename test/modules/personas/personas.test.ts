// Personas (spec 4.16): the built-in catalog, and previews spoken by local
// espeak-ng, answered as a JWE that the registered server's private key opens
// into a real, audible WAV.
import { randomUUID } from 'node:crypto';
import { compactDecrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import {
  type RegisteredServer,
  encryptToService,
  privateKeyOf,
  registerServer,
  signPayload,
  unsignedToken,
} from '../../support/signed-payloads.js';
import { parseWav } from '../../support/wav.js';

let t: TestApp;
let user: TestUser;
let server: RegisteredServer;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
  server = await registerServer(t, user);
});
afterAll(() => t.close());

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const preview = (claims: Record<string, unknown> = {}, options: Parameters<typeof signPayload>[2] = {}) =>
  signPayload(server, { use: 'persona-preview', ...claims }, { now: t.clock.now(), ...options });
const play = (id: string, body: Record<string, unknown>, who: TestUser = user) =>
  t.app.inject({ method: 'POST', url: `/api/persona/${id}/play`, headers: bearer(who.token), payload: body });

async function decryptAudio(
  answer: { header: Record<string, unknown>; content: string },
  s: RegisteredServer = server,
) {
  const { plaintext, protectedHeader } = await compactDecrypt(answer.content, privateKeyOf(s));
  expect(protectedHeader.cty).toBe(answer.header.contentType);
  return plaintext;
}

describe('persona catalog', () => {
  it('lists at least six built-in local personas with distinct names, descriptions, instructions and voices', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/personas', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    const local = res.json().filter((p: { settings: { type: string } }) => p.settings.type === 'local');
    expect(local.length).toBeGreaterThanOrEqual(6);
    for (const field of ['id', 'name', 'description', 'instructions'] as const) {
      expect(new Set(local.map((p: Record<string, string>) => p[field])).size).toBe(local.length);
    }
    expect(new Set(local.map((p: { settings: { voiceId: string } }) => p.settings.voiceId)).size).toBe(local.length);
    for (const p of local) expect(p.id).toMatch(/^local-[a-z]+$/);
  });

  it('reads one persona by id; an unknown id is 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/persona/local-amy', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: 'local-amy',
      name: 'Amy',
      settings: { type: 'local', voiceId: 'en-us+f3' },
    });
    const missing = await t.app.inject({
      method: 'GET',
      url: '/api/persona/local-nobody',
      headers: bearer(user.token),
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    const external = await t.app.inject({
      method: 'GET',
      url: '/api/persona/elevenlabs-21m00Tcm4TlvDq8ikWAM',
      headers: bearer(user.token),
    });
    expect(external.statusCode).toBe(404);
  });

  it('lists no external personas without an ElevenLabs key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/persona/list-external', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });

  it('needs credentials', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/personas' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/persona/local-amy' })).statusCode).toBe(401);
  });
});

describe('POST /api/persona/{id}/play (local speech)', () => {
  it('speaks textBase64 as an audible WAV encrypted to the registered server', async () => {
    const res = await play('local-amy', {
      server: server.name,
      jwt: await preview({ textBase64: b64('Hello! Your appointment is confirmed for Tuesday at ten.') }),
    });
    expect(res.statusCode).toBe(200);
    const answer = res.json();
    expect(answer.header).toMatchObject({
      alg: 'ECDH-ES+A256KW',
      enc: 'A256GCM',
      cty: 'audio/wav',
      contentType: 'audio/wav',
      kid: server.name,
    });
    const wav = parseWav(await decryptAudio(answer));
    expect(wav).toMatchObject({ format: 1, channels: 1, bitsPerSample: 16, sampleRate: 22050 });
    expect(wav.durationSeconds).toBeGreaterThan(1.5);
    expect(wav.rms).toBeGreaterThan(500);
  });

  it("speaks the persona description when textBase64 is absent, with that persona's voice", async () => {
    const amy = parseWav(
      await decryptAudio((await play('local-amy', { server: server.name, jwt: await preview() })).json()),
    );
    const james = parseWav(
      await decryptAudio((await play('local-james', { server: server.name, jwt: await preview() })).json()),
    );
    expect(amy.rms).toBeGreaterThan(500);
    expect(james.rms).toBeGreaterThan(500);
    // Different text, voice and speed: different audio.
    expect(amy.samples.length).not.toBe(james.samples.length);
  });

  it('accepts the payload nested in a JWE to the service key', async () => {
    const serviceKey = (await t.app.inject({ method: 'GET', url: '/api/server', headers: bearer(user.token) })).json();
    const jwt = await encryptToService(await preview({ textBase64: b64('Nested and sealed.') }), serviceKey);
    const res = await play('local-sofia', { server: server.name, jwt });
    expect(res.statusCode).toBe(200);
    expect(parseWav(await decryptAudio(res.json())).rms).toBeGreaterThan(500);
  });

  it('refuses a replayed jwt', async () => {
    const jwt = await preview({ textBase64: b64('Once only.') });
    expect((await play('local-amy', { server: server.name, jwt })).statusCode).toBe(200);
    const again = await play('local-amy', { server: server.name, jwt });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_token');
  });

  it('plays one of several concurrent requests carrying the same jwt; the others are invalid_token', async () => {
    const jwt = await preview({ textBase64: b64('Only one of you.') });
    const answers = await Promise.all(Array.from({ length: 6 }, () => play('local-amy', { server: server.name, jwt })));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(answers.filter((r) => r.statusCode === 400).every((r) => r.json().code === 'invalid_token')).toBe(true);
  });

  it('refuses expired, too-far, unsigned, wrong-use and forged jwts with 400 invalid_token', async () => {
    const other = await registerServer(t, user);
    const cases = {
      expired: await preview({}, { now: t.clock.now() - 3600_000 }),
      tooFar: await preview({}, { expiresIn: 3600 }),
      unsigned: unsignedToken({
        use: 'persona-preview',
        exp: Math.floor(t.clock.now() / 1000) + 60,
        jti: randomUUID(),
      }),
      wrongUse: await signPayload(server, { use: 'call-session' }, { now: t.clock.now() }),
      otherServer: await signPayload(other, { use: 'persona-preview' }, { now: t.clock.now() }),
    };
    for (const [name, jwt] of Object.entries(cases)) {
      const res = await play('local-amy', { server: server.name, jwt });
      expect({ name, status: res.statusCode, code: res.json().code }).toEqual({
        name,
        status: 400,
        code: 'invalid_token',
      });
    }
  });

  it("answers 404 for an unknown server and for another user's server, which cannot sign for the caller", async () => {
    const unknown = await play('local-amy', { server: 'nope', jwt: await preview() });
    expect(unknown.statusCode).toBe(404);
    const mallory = await createVerifiedUser(t);
    const res = await play('local-amy', { server: server.name, jwt: await preview() }, mallory);
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
  });

  it('refuses bad textBase64 with 400 invalid_input without consuming the jti', async () => {
    const jti = randomUUID();
    const tooLong = await play('local-amy', {
      server: server.name,
      jwt: await preview({ textBase64: b64('a'.repeat(1001)) }, { jti }),
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json()).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('1000') });
    const notBase64 = await play('local-amy', {
      server: server.name,
      jwt: await preview({ textBase64: 'not base64!' }, { jti }),
    });
    expect(notBase64.json().code).toBe('invalid_input');
    const ok = await play('local-amy', {
      server: server.name,
      jwt: await preview({ textBase64: b64('Now it is fine.') }, { jti }),
    });
    expect(ok.statusCode).toBe(200);
  });

  it('answers 404 for an unknown persona without consuming the jti', async () => {
    const jwt = await preview();
    expect((await play('local-nobody', { server: server.name, jwt })).statusCode).toBe(404);
    expect((await play('local-grace', { server: server.name, jwt })).statusCode).toBe(200);
  });

  it('needs a verified phone (data-plane authentication)', async () => {
    const unverified = await registerUser(t);
    const res = await play('local-amy', { server: server.name, jwt: await preview() }, unverified);
    expect(res.statusCode).toBe(403);
  });

  it('speaks every built-in persona audibly', async () => {
    const list = (await t.app.inject({ method: 'GET', url: '/api/personas', headers: bearer(user.token) })).json();
    for (const persona of list) {
      const res = await play(persona.id, {
        server: server.name,
        jwt: await preview({ textBase64: b64('Testing one two three.') }),
      });
      expect({ id: persona.id, status: res.statusCode }).toEqual({ id: persona.id, status: 200 });
      expect(parseWav(await decryptAudio(res.json())).rms).toBeGreaterThan(300);
    }
  });
});
