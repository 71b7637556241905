// Paid voice previews (ElevenLabs) are limited per user: a rate, and a cap on
// characters per day (429 voice_preview_quota_exceeded, the refused request not
// counted, nothing sent to ElevenLabs). Local espeak previews count against
// neither. Forged and replayed payloads cost nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type ElevenLabsFake, startElevenLabsFake } from '../../support/elevenlabs-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type RegisteredServer, registerServer, signPayload } from '../../support/signed-payloads.js';

const HOUR = 3_600_000;
const PAID = 'elevenlabs-AZnzlk1XvdvUeBnXmlld';

let t: TestApp;
let fake: ElevenLabsFake;
beforeAll(async () => {
  fake = await startElevenLabsFake();
  t = await createTestApp({
    env: { ELEVENLABS_API_KEY: fake.apiKey, ELEVENLABS_API_BASE: fake.apiBase },
    config: {
      rateLimits: {
        ...relaxedIpLimits,
        voicePreviewPerUser: { limit: 4, windowMs: HOUR },
        voicePreviewCharactersPerUser: { limit: 100, windowMs: 24 * HOUR },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const text = (n: number) => 'x'.repeat(n);
async function speaker() {
  const user = await createVerifiedUser(t);
  const server = await registerServer(t, user);
  return { user, server };
}
const jwtFor = (server: RegisteredServer, chars: number) =>
  signPayload(
    server,
    { use: 'persona-preview', textBase64: Buffer.from(text(chars)).toString('base64') },
    { now: t.clock.now() },
  );
const play = async (who: { user: TestUser; server: RegisteredServer }, persona: string, chars: number, jwt?: string) =>
  t.app.inject({
    method: 'POST',
    url: `/api/persona/${persona}/play`,
    headers: bearer(who.user.token),
    payload: { server: who.server.name, jwt: jwt ?? (await jwtFor(who.server, chars)) },
  });
const spoken = () =>
  fake.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/text-to-speech/')).length;

describe('paid voice previews', () => {
  it('are capped in characters per day: the preview that would pass the cap is 429 and not counted; a day later the cap is back', async () => {
    const who = await speaker();
    expect((await play(who, PAID, 60)).statusCode).toBe(200);
    const before = spoken();
    const refused = await play(who, PAID, 50);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'voice_preview_quota_exceeded', limit: 100, remaining: 40 });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(spoken()).toBe(before); // ElevenLabs was not asked
    expect((await play(who, PAID, 40)).statusCode).toBe(200);
    expect((await play(who, PAID, 1)).json().code).toBe('voice_preview_quota_exceeded');
    // Another user has a cap of their own.
    expect((await play(await speaker(), PAID, 100)).statusCode).toBe(200);
    // A day later (the sign-in token has expired by then, so the service is asked directly) the cap is back.
    t.clock.advance(24 * HOUR + 1000);
    const answer = await t.services.personas.personas.play(who.user.id, PAID, {
      server: who.server.name,
      jwt: await jwtFor(who.server, 90),
    });
    expect(answer.header.contentType).toBe('audio/mpeg');
  });

  it('are rate-limited per user', async () => {
    const who = await speaker();
    for (let i = 0; i < 4; i++) expect((await play(who, PAID, 5)).statusCode).toBe(200);
    const refused = await play(who, PAID, 5);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
  });

  it('concurrent previews never together pass the cap', async () => {
    const who = await speaker();
    const answers = await Promise.all([1, 2, 3, 4].map(() => play(who, PAID, 40)));
    const ok = answers.filter((a) => a.statusCode === 200).length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok * 40).toBeLessThanOrEqual(100);
    for (const a of answers) if (a.statusCode !== 200) expect(a.json().code).toBe('voice_preview_quota_exceeded');
  });

  it('a replayed or forged payload costs nothing', async () => {
    const who = await speaker();
    const jwt = await jwtFor(who.server, 60);
    expect((await play(who, PAID, 60, jwt)).statusCode).toBe(200);
    expect((await play(who, PAID, 60, jwt)).json().code).toBe('invalid_token');
    const other = await speaker();
    expect((await play(who, PAID, 60, await jwtFor(other.server, 60))).json().code).toBe('invalid_token');
    expect((await play(who, PAID, 40)).statusCode).toBe(200);
  });
});

describe('local previews', () => {
  it('do not count against the daily characters (nor the paid rate)', async () => {
    const who = await speaker();
    for (let i = 0; i < 2; i++) expect((await play(who, 'local-amy', 60)).statusCode).toBe(200);
    // 120 local characters spoken, and still the whole paid cap is there.
    expect((await play(who, PAID, 100)).statusCode).toBe(200);
  });
});
