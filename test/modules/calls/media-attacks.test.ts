// The media sockets under attack (issue 46), on real sockets against a
// listening app: strangers flooding /api/media/twilio before any token (closed
// at their first wrong message, over-cap sockets refused, another user still
// answered), a message that is not Twilio Media Streams in a call under way
// (closed, the call ends refused), a token presented with another call's
// CallSid (refused, the other call untouched), and a browser sending audio far
// faster than real time (dropped and counted, the call ended, its audio
// bounded).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { type TwilioFake, startTwilioFake } from '../../support/twilio-fake.js';
import { callConfig } from './support.js';
import { WallClock, endedCall, startWebCall } from './web-call-support.js';
import { insertPhoneNumber, randomUsNumber } from '../../support/phone-numbers.js';

let t: TestApp;
let twilio: TwilioFake;
let origin: string;

beforeAll(async () => {
  twilio = await startTwilioFake();
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  t = await createTestApp({
    clock: new WallClock(),
    env: { PORT: String(port) },
    config: {
      ...callConfig(),
      publicUrl: origin,
      twilio: {
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: twilio.from,
        apiBase: twilio.apiBase,
      },
    },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await twilio?.close();
}, 60_000);

type Closed = { code: number; reason: string };

/** A WebSocket to the app that records how it was closed. */
function connect(path: string) {
  const ws = new WebSocket(`ws://${new URL(origin).host}${path}`);
  ws.on('error', () => {}); // a refused socket may see its connection cut
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', () => reject(new Error('upgrade refused')));
  });
  const closed = new Promise<Closed>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const messages: Array<Record<string, unknown>> = [];
  ws.on('message', (data, isBinary) => {
    if (!isBinary) messages.push(JSON.parse(String(data)));
  });
  return { ws, opened, closed, messages };
}

const isOpen = (ws: WebSocket) => ws.readyState === WebSocket.OPEN;

async function twilioNumber(user: TestUser): Promise<string> {
  const phone = randomUsNumber();
  const sid = `PN${randomUUID().replace(/-/g, '').slice(0, 32)}`;
  twilio.incoming.set(sid, { sid, phoneNumber: phone, friendlyName: phone, addressSid: null, voiceUrl: '' });
  return (await insertPhoneNumber(t, user.id, { provider: 'twilio', phone, sid })).id;
}

/** An outbound call placed through (fake) Twilio: its session, the Calls.json request, the stream URL and token of its TwiML. */
async function placeCall(user: TestUser) {
  const server = await registerServer(t, user);
  const numberId = await twilioNumber(user);
  const jwt = await signPayload(server, {
    agent: { name: 'Amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
    contact: { name: 'Grace', phone: '+14155550123' },
    type: 'prompt',
    prompt: 'Confirm the appointment.',
    phoneNumberId: numberId,
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/session/call',
    headers: bearer(user.token),
    payload: { server: server.name, jwt },
  });
  expect(res.statusCode, res.body).toBe(204);
  const placed = twilio.calls.at(-1)!;
  const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml)!;
  return { sessionId: res.headers['x-session-id'] as string, placed, token: stream[2]! };
}

/** What Twilio sends first: `connected`, then `start` with the token and a CallSid. */
function startStream(ws: WebSocket, token: string, callSid: string, streamSid = `MZ${randomUUID().replace(/-/g, '')}`) {
  ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
  ws.send(
    JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid,
      start: {
        streamSid,
        accountSid: twilio.accountSid,
        callSid,
        tracks: ['inbound'],
        customParameters: { token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    }),
  );
  return streamSid;
}

const callView = async (user: TestUser, id: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/calls/${id}`, headers: bearer(user.token) })).json();

describe('strangers on /api/media/twilio', () => {
  it('closes each at its first wrong message, refuses sockets over the cap (1013), and another user is answered meanwhile', async () => {
    const victim = await createFundedUser(t);
    const admission = t.services.voice.admission;
    // 20 strangers from one address, silent at first: 8 wait for their token, 12 are refused at once.
    const strangers = Array.from({ length: 20 }, () => connect('/api/media/twilio'));
    await Promise.all(strangers.map((s) => s.opened.catch(() => {})));
    await vi.waitFor(() => expect(strangers.filter((s) => !isOpen(s.ws)).length).toBe(12), {
      timeout: 10_000,
      interval: 20,
    });
    const refused = strangers.filter((s) => !isOpen(s.ws));
    for (const s of refused) expect((await s.closed).code).toBe(1013);
    expect(admission.waitingFrom('127.0.0.1')).toBe(8);

    // The 8 that got in, each with another wrong first move.
    const [garbage, binary, big, huge, chatty, tokenless, forged, silent] = strangers.filter((s) => isOpen(s.ws));
    garbage!.ws.send('not json at all');
    binary!.ws.send(Buffer.from([0, 1, 2, 3]));
    big!.ws.send(JSON.stringify({ event: 'connected', padding: 'x'.repeat(5000) }));
    huge!.ws.send(Buffer.alloc(200 * 1024)); // over the server's 64 KB maxPayload
    for (let i = 0; i < 3; i++)
      chatty!.ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
    startStream(tokenless!.ws, '', 'CA1');
    startStream(forged!.ws, 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln', 'CA1');
    // Another user's plain request while they are at it: answered, and right.
    const answer = await fetch(`${origin}/api/calls`, { headers: { authorization: `Bearer ${victim.token}` } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ calls: [], nextBefore: null });

    expect(await garbage!.closed).toMatchObject({ code: 1007 });
    expect(await binary!.closed).toMatchObject({ code: 1008 });
    expect(await big!.closed).toMatchObject({ code: 1009 });
    expect(await huge!.closed).toMatchObject({ code: 1009 });
    expect(await chatty!.closed).toMatchObject({ code: 1008 });
    expect(await tokenless!.closed).toMatchObject({ code: 1008, reason: 'no token' });
    expect(await forged!.closed).toMatchObject({ code: 1008, reason: expect.stringContaining('media token refused') });
    // The one that only waits: closed at its deadline, not left open.
    expect(await silent!.closed).toMatchObject({ code: 1008, reason: 'no accepted token in time' });

    // Their places are free again: the next stranger gets in (and is closed for its own garbage, not refused).
    await vi.waitFor(() => expect(admission.waiting).toBe(0), { timeout: 5_000, interval: 20 });
    const next = connect('/api/media/twilio');
    await next.opened;
    next.ws.send('{');
    expect(await next.closed).toMatchObject({ code: 1007 });
    // No session was touched by any of them.
    expect(
      (await t.database.db.selectFrom('call_sessions').select('id').where('media_instance', 'is not', null).execute())
        .length,
    ).toBe(0);
  }, 60_000);

  it('closes strangers streaming big frames at once, however many come, and keeps answering others', async () => {
    const victim = await createFundedUser(t);
    const frame = Buffer.alloc(60 * 1024, 0x41);
    let closedFor1009 = 0;
    let refused = 0;
    let answered = 0;
    for (let round = 0; round < 5; round++) {
      const wave = Array.from({ length: 30 }, () => connect('/api/media/twilio'));
      await Promise.all(
        wave.map(async (s) => {
          await s.opened.catch(() => {});
          for (let i = 0; i < 20 && isOpen(s.ws); i++) s.ws.send(frame);
          const { code } = await s.closed;
          if (code === 1009) closedFor1009++;
          else if (code === 1013) refused++;
          else throw new Error(`closed with ${code}`);
        }),
      );
      const res = await fetch(`${origin}/api/calls`, { headers: { authorization: `Bearer ${victim.token}` } });
      if (res.status === 200 && Array.isArray(((await res.json()) as { calls: unknown[] }).calls)) answered++;
    }
    expect(closedFor1009 + refused).toBe(150);
    expect(closedFor1009).toBeGreaterThanOrEqual(5 * 8);
    expect(answered).toBe(5);
    await vi.waitFor(() => expect(t.services.voice.admission.waiting).toBe(0), { timeout: 5_000, interval: 20 });
  }, 60_000);
});

describe('a Twilio stream bound to its call', () => {
  it("refuses a session's token presented with another call's CallSid (1008) without touching that call; the carrier's own stream then carries the call, and one invalid message ends it refused", async () => {
    const mine = await createFundedUser(t);
    const theirs = await createFundedUser(t);
    const a = await placeCall(mine);
    const b = await placeCall(theirs);
    expect(a.placed.sid).not.toBe(b.placed.sid);

    // A's token with B's CallSid: refused, and B's call is left alone (no hang-up, no redirect, no media claimed).
    const hijack = connect('/api/media/twilio');
    await hijack.opened;
    startStream(hijack.ws, a.token, b.placed.sid);
    expect(await hijack.closed).toMatchObject({ code: 1008, reason: expect.stringContaining('another call') });
    expect(b.placed.redirects).toEqual([]);
    const bRow = await t.database.db
      .selectFrom('call_sessions')
      .select(['status', 'media_instance', 'outcome'])
      .where('id', '=', b.sessionId)
      .executeTakeFirstOrThrow();
    expect(bRow).toMatchObject({ media_instance: null, outcome: null });
    expect(['created', 'queued']).toContain(bRow.status);
    expect(a.placed.redirects).toEqual([]);

    // The token was not spent: Twilio's own stream for A carries A's call.
    const own = connect('/api/media/twilio');
    await own.opened;
    startStream(own.ws, a.token, a.placed.sid);
    await vi.waitFor(async () => expect((await callView(mine, a.sessionId)).status).toBe('in_progress'), {
      timeout: 20_000,
      interval: 50,
    });
    expect(isOpen(own.ws)).toBe(true);

    // One message that is not Twilio Media Streams: closed (1007), and the call ends failed, outcome refused.
    own.ws.send('this is not JSON');
    expect(await own.closed).toMatchObject({ code: 1007, reason: 'invalid_message' });
    const view = await endedCall(t, mine, a.sessionId);
    expect(view).toMatchObject({ status: 'failed', outcome: 'refused', reason: 'invalid_message' });
    // B still untouched.
    expect(b.placed.redirects).toEqual([]);
    expect(
      await t.database.db
        .selectFrom('call_sessions')
        .select(['media_instance', 'outcome'])
        .where('id', '=', b.sessionId)
        .executeTakeFirstOrThrow(),
    ).toEqual({ media_instance: null, outcome: null });
  }, 60_000);
});

describe('a browser sending audio faster than real time', () => {
  it('has the excess dropped and counted, is ended refused (audio_flood) when it keeps on, and its call keeps only about real time of audio', async () => {
    const user = await createFundedUser(t);
    const victim = await createFundedUser(t);
    const started = await startWebCall(t, user, { agent: { name: 'Amy', firstMessage: 'Hello, this is Amy.' } });
    expect(started.statusCode, started.body).toBe(201);
    const { sessionId, url } = started.json();
    const browser = connect(new URL(url).pathname + new URL(url).search);
    await browser.opened;
    await vi.waitFor(async () => expect((await callView(user, sessionId)).status).toBe('in_progress'), {
      timeout: 20_000,
      interval: 50,
    });

    // The flood: two seconds of 16 kHz audio per 64 KB message, as fast as the socket takes them.
    const twoSeconds = Buffer.alloc(640 * 100);
    for (let i = 0; i < 1000 && isOpen(browser.ws); i++) {
      browser.ws.send(twoSeconds);
      if (i % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await browser.closed).toMatchObject({ code: 1008, reason: 'audio_flood' });
    expect(browser.messages.at(-1)).toEqual({ type: 'ended', reason: 'audio_flood' });

    const view = await endedCall(t, user, sessionId);
    expect(view).toMatchObject({ direction: 'web', status: 'failed', outcome: 'refused', reason: 'audio_flood' });
    // The recording's caller channel holds what was taken: the 2 s burst and about real time since, not the flood.
    const wav = await t.app.inject({
      method: 'GET',
      url: `/api/calls/${sessionId}/recording`,
      headers: bearer(user.token),
    });
    expect(wav.statusCode).toBe(200);
    const seconds = (wav.rawPayload.length - 44) / (8000 * 2 * 2);
    expect(seconds).toBeLessThan(2 + 1.1 * (view.durationSeconds + 1) + 1);
    // Counted where an operator sees it.
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(Number(/^voice_caller_audio_dropped_seconds_total (\S+)/m.exec(metrics)?.[1])).toBeGreaterThan(5);
    // Another user is answered as ever.
    const res = await fetch(`${origin}/api/calls`, { headers: { authorization: `Bearer ${victim.token}` } });
    expect(res.status).toBe(200);
  }, 60_000);
});
