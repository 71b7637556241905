// Local speech is fair (issue 46): one account flooding free local previews
// cannot make another account's call fail. The call's sentences go ahead of
// previews in the one local speech queue, previews get only spare room in it
// and a few places per account (429 past them), and local previews have a
// per-user rate of their own (RATE_LIMIT_LOCAL_VOICE_PREVIEW_PER_USER).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { type RegisteredServer, registerServer, signPayload } from '../../support/signed-payloads.js';
import { callConfig } from '../calls/support.js';
import { BrowserCall, WallClock, endedCall, startWebCall } from '../calls/web-call-support.js';

const HOUR = 3_600_000;
const PREVIEW_TEXT = Buffer.from(
  'This is a preview of a local voice, long enough to keep espeak busy for a while. '.repeat(3),
).toString('base64');

interface Speaker {
  user: TestUser;
  server: RegisteredServer;
}

async function speaker(t: TestApp): Promise<Speaker> {
  const user = await createVerifiedUser(t);
  return { user, server: await registerServer(t, user) };
}

async function play(t: TestApp, who: Speaker) {
  const jwt = await signPayload(
    who.server,
    { use: 'persona-preview', textBase64: PREVIEW_TEXT },
    { now: t.clock.now() },
  );
  return t.app.inject({
    method: 'POST',
    url: '/api/persona/local-amy/play',
    headers: bearer(who.user.token),
    payload: { server: who.server.name, jwt },
  });
}

describe('a flood of local previews beside a call', () => {
  let t: TestApp;
  beforeAll(async () => {
    const port = await freePort();
    // The per-user rate of local previews is out of the way here: the queue alone has to keep the call speaking.
    t = await createTestApp({
      clock: new WallClock(),
      env: { PORT: String(port) },
      config: {
        ...callConfig(),
        publicUrl: `http://127.0.0.1:${port}`,
        rateLimits: { ...relaxedIpLimits, localVoicePreviewPerUser: { limit: 1_000_000, windowMs: HOUR } },
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
  }, 60_000);
  afterAll(() => t?.close(), 60_000);

  it("another account's web call still speaks (agent lines, not provider_error); the flooding account gets 429", async () => {
    const flooder = await speaker(t);
    const victim = await createVerifiedUser(t);
    const answers = new Map<number | string, number>();
    let stop = false;
    // Many previews always in flight: as soon as one is answered the next is asked.
    const flood = async () => {
      while (!stop) {
        const res = await play(t, flooder);
        const key = res.statusCode === 429 ? `429 ${res.json().code} ${res.headers['retry-after']}` : res.statusCode;
        answers.set(key, (answers.get(key) ?? 0) + 1);
      }
    };
    const floods = Array.from({ length: 24 }, flood);
    try {
      // The flood is refused before the call starts: the queue has as much of it as it takes.
      await vi.waitFor(() => expect(answers.get('429 rate_limited 2') ?? 0).toBeGreaterThan(20), {
        timeout: 20_000,
        interval: 20,
      });

      const greeting = 'Hi, Ava here. How can I help you today?';
      const res = await startWebCall(t, victim, { agent: { name: 'Ava', firstMessage: greeting } });
      expect(res.statusCode, res.body).toBe(201);
      const call = new BrowserCall(res.json().url);
      // The greeting starts being said (its speech was made despite the flood), then is heard whole; slow on a loaded CI.
      await call.waitFor(
        () => call.of('transcript').some((m) => m.role === 'agent') || call.of('ended').length > 0,
        'the greeting starts, or the call ends',
        40_000,
      );
      expect(call.of('ended')).toEqual([]);
      await call.waitFor(
        () => call.lines('agent').length === 1 || call.of('ended').length > 0,
        'the greeting heard, or the end of the call',
        40_000,
      );
      expect(call.of('ended')).toEqual([]);
      // Said whole (the live line is the sentence told as it starts). Heard: a non-empty start of it, whole unless this
      // loaded process echoed a mark more than 2 s late, which the sink counts as never played (sink.ts ackTimeoutMs).
      expect(call.of('transcript').some((m) => m.role === 'agent' && m.text === greeting)).toBe(true);
      const heard = call.lines('agent');
      expect(heard).toHaveLength(1);
      expect(greeting.startsWith(heard[0]!) && heard[0]!.length > 0, heard[0]).toBe(true);
      expect(call.agentBytes).toBeGreaterThan(0);
      call.ws.close(1000);
      const view = await endedCall(t, victim, res.json().sessionId);
      expect(view.outcome).not.toBe('provider_error');
      expect(view).toMatchObject({ direction: 'web', status: 'completed', reason: 'socket_closed' });
      expect(
        view.transcript
          .filter((line: { role: string }) => line.role === 'agent')
          .map((line: { text: string }) => line.text),
      ).toEqual(heard);
    } finally {
      stop = true;
      await Promise.all(floods);
    }
    // Some previews were spoken; the rest were refused with 429 and Retry-After, nothing else.
    expect(answers.get(200) ?? 0).toBeGreaterThan(0);
    expect([...answers.keys()].sort()).toEqual([200, '429 rate_limited 2']);
  }, 150_000);
});

describe('the per-user rate of local previews', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      config: { rateLimits: { ...relaxedIpLimits, localVoicePreviewPerUser: { limit: 3, windowMs: HOUR } } },
    });
  });
  afterAll(() => t?.close());

  it('refuses the fourth local preview of an hour with 429 rate_limited and Retry-After; another account has its own', async () => {
    const who = await speaker(t);
    for (let i = 0; i < 3; i++) expect((await play(t, who)).statusCode).toBe(200);
    const refused = await play(t, who);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect((await play(t, await speaker(t))).statusCode).toBe(200);
    // An hour later the rate is back (the sign-in token has expired by then: the service is asked directly).
    t.clock.advance(HOUR + 1000);
    const jwt = await signPayload(who.server, { use: 'persona-preview' }, { now: t.clock.now() });
    expect(
      (await t.services.personas.personas.play(who.user.id, 'local-amy', { server: who.server.name, jwt })).header
        .contentType,
    ).toBe('audio/wav');
  });
});
