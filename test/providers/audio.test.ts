// The real audio adapter against a local audio server (test/support/audio-fake.ts):
// our POST /calls is signed and verified there with the official library; its
// progress reports come back over HTTP to /api/webhooks/audio/{sessionId}.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret } from '../../src/lib/standard-webhooks.js';
import { HttpAudioProvider } from '../../src/providers/audio/http.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type AudioFake, startAudioFake } from '../support/audio-fake.js';
import { createFundedUser } from '../support/factories.js';
import { assembledCall } from '../modules/calls/support.js';
import { eventually, stream } from '../modules/events/support.js';
import { freePort } from '../support/ports.js';

const secret = generateWebhookSecret();
let fake: AudioFake;
let t: TestApp;

beforeAll(async () => {
  fake = await startAudioFake({ secret });
  const port = await freePort();
  t = await createTestApp({
    env: { AUDIO_SERVER_URL: fake.url, AUDIO_SERVER_SECRET: secret, PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const session = (id: string) =>
  t.database.db.selectFrom('call_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('HTTP audio provider', () => {
  it('is chosen when AUDIO_SERVER_URL is set', () => {
    expect(t.services.providers.audio).toBeInstanceOf(HttpAudioProvider);
    expect(t.services.providers.audio.sandbox).toBe(false);
  });

  it('POSTs the signed assembled call; the audio server reports progress back over HTTP, signed, and the stream shows it', async () => {
    const user = await createFundedUser(t);
    const call = assembledCall();
    const { sessionId } = await t.services.calls.calls.start(user.id, call, null);
    const sse = await stream(t, user.token, `call_status?session_id=${sessionId}`, {
      headers: { 'last-event-id': '0' },
    });
    const events = await sse.waitForEvents(4, 20_000);
    sse.close();
    await fake.settled();

    const request = fake.calls.find((c) => c.body.session_id === sessionId)!;
    expect(request.signatureValid).toBe(true);
    // The call goes out with the longest duration its charge allows (CALL_MAX_SECONDS here: $5 covers an hour to the US).
    expect(request.body.call).toEqual({ ...call, maxDurationSeconds: t.config.billing.callMaxSeconds });
    expect(request.body.progress_url).toBe(`${t.config.publicUrl}/api/webhooks/audio/${sessionId}`);
    expect((await session(sessionId)).provider_call_id).toBe(`ac_${sessionId}`);

    expect(fake.reports.filter((r) => r.sessionId === sessionId).map((r) => r.status)).toEqual([204, 204, 204, 204]);
    const payloads = events.map((e) => JSON.parse(e.data));
    expect(payloads.map((p) => p.status)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
    expect(payloads[3]).toMatchObject({
      duration_seconds: 42,
      transcript: [
        { role: 'agent', text: 'Hello from the audio server.' },
        { role: 'contact', text: 'Hi there.' },
      ],
    });
    await eventually(async () => (await session(sessionId)).finished_at !== null, 5000, 'call accounted for');
    expect(await session(sessionId)).toMatchObject({ status: 'completed', duration_seconds: 42 });
  });

  it('over HTTP: a report signed with another secret is 400 and a replayed one changes nothing', async () => {
    const user = await createFundedUser(t);
    const { sessionId } = await t.services.calls.calls.start(user.id, assembledCall(), null);
    await fake.settled();
    const url = `${t.config.publicUrl}/api/webhooks/audio/${sessionId}`;
    const forged = await fake.report(
      url,
      { status: 'failed', at: new Date().toISOString() },
      { secret: generateWebhookSecret() },
    );
    expect(forged.status).toBe(400);
    expect(JSON.parse(forged.body).code).toBe('invalid_token');
    const first = fake.reports.find((r) => r.sessionId === sessionId)!;
    const events = () =>
      t.database.db
        .selectFrom('events')
        .select('id')
        .where('user_id', '=', user.id)
        .where('type', '=', 'call_status')
        .execute();
    const before = (await events()).length;
    const replay = await fake.report(url, { status: 'queued', at: new Date().toISOString() }, { id: first.id });
    expect(replay.status).toBe(204);
    expect((await events()).length).toBe(before);
    expect((await session(sessionId)).status).toBe('completed');
  });

  it('a refused call ends the session as failed (event) and is a provider_error', async () => {
    const refusing = await startAudioFake({ secret, refuseWith: 503 });
    const unreachable = await startAudioFake({ secret });
    await unreachable.close();
    try {
      for (const [server, message] of [
        [refusing, /refused the call: no capacity/],
        [unreachable, /unreachable/],
      ] as const) {
        const provider = new HttpAudioProvider({ url: server.url, secret }, t.clock);
        await expect(provider.startCall('s1', assembledCall(), 'http://127.0.0.1:1/x')).rejects.toMatchObject({
          code: 'provider_error',
          message: expect.stringMatching(message),
        });
      }
      // The same through the service of an app whose audio server refuses: the session is failed and says so.
      const other = await createTestApp({ env: { AUDIO_SERVER_URL: refusing.url, AUDIO_SERVER_SECRET: secret } });
      try {
        const user = await createFundedUser(other);
        await expect(other.services.calls.calls.start(user.id, assembledCall(), null)).rejects.toMatchObject({
          code: 'provider_error',
        });
        const rows = await other.database.db
          .selectFrom('call_sessions')
          .selectAll()
          .where('user_id', '=', user.id)
          .execute();
        expect(rows.map((r) => r.status)).toEqual(['failed']);
        const payloads = (
          await other.database.db
            .selectFrom('events')
            .select('payload')
            .where('user_id', '=', user.id)
            .where('type', '=', 'call_status')
            .execute()
        ).map((r) => JSON.parse(r.payload));
        expect(payloads).toMatchObject([{ session_id: rows[0].id, status: 'failed' }]);
        // Its hold went back whole, once: nothing was charged for a call that never started.
        const ledger = (
          await other.database.db
            .selectFrom('credit_ledger')
            .selectAll()
            .where('user_id', '=', user.id)
            .orderBy('id')
            .execute()
        ).map((r) => [r.reason, Number(r.cents)]);
        expect(ledger).toEqual([
          ['topup', 500],
          ['hold', -84],
          ['refund', 84],
        ]);
        expect(await other.services.billing.account.balanceCents(user.id)).toBe(500);
      } finally {
        await other.close();
      }
    } finally {
      await refusing.close();
    }
  });

  it('a request signed with another secret is refused by the audio server', async () => {
    const provider = new HttpAudioProvider({ url: fake.url, secret: generateWebhookSecret() }, t.clock);
    await expect(provider.startCall('s2', assembledCall(), 'http://127.0.0.1:1/x')).rejects.toMatchObject({
      code: 'provider_error',
      message: expect.stringMatching(/bad signature/),
    });
    expect(fake.calls.at(-1)!.signatureValid).toBe(false);
  });
});
