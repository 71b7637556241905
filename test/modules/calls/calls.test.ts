// Call sessions with the in-process sandbox audio server, over real sockets:
// start() → call_status events on the stream (filtered by session), signed
// webhook deliveries (checked with the standardwebhooks oracle), usage once,
// and an encrypted record in the caller's calls store.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../src/lib/standard-webhooks.js';
import { STALLED_AFTER_MS } from '../../../src/modules/calls/service.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { eventPayloadErrors } from '../../support/event-schemas.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { eventually, stream } from '../events/support.js';
import { AUDIO_SECRET, CountingUsage, assembledCall, callConfig, callRecords, callServicesWith } from './support.js';

let t: TestApp;
let receiver: WebhookReceiver;
let usage: CountingUsage;
let calls: ReturnType<typeof callServicesWith>['calls'];
let charges: NonNullable<ReturnType<typeof callServicesWith>['charges']>;
beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  receiver = await startWebhookReceiver();
  usage = new CountingUsage(t.services.billing.account);
  ({ calls, charges } = callServicesWith(t, usage) as { calls: typeof calls; charges: typeof charges });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const session = (id: string) =>
  t.database.db.selectFrom('call_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const statusEvents = (userId: string, sessionId: string) =>
  t.database.db
    .selectFrom('events')
    .select('payload')
    .where('user_id', '=', userId)
    .where('type', '=', 'call_status')
    .orderBy('id')
    .execute()
    .then((rows) => rows.map((r) => JSON.parse(r.payload)).filter((p) => p.session_id === sessionId));

/** A signed report for the audio webhook, as the audio server sends it. */
function signedReport(body: Record<string, unknown>, id = `evt_${randomUUID()}`, secret = AUDIO_SECRET) {
  const raw = Buffer.from(JSON.stringify(body));
  return { raw, headers: { ...signWebhook([secret], id, t.clock.now(), raw) } as Record<string, string> };
}

describe('a sandbox call from start to completed', () => {
  it('streams call_status events for the session, delivers each as a signed webhook, records usage once and writes an encrypted call record', async () => {
    const user = await createFundedUser(t);
    const secret = (
      await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(user.token) })
    ).json().secret;
    // Another call of the same user at the same time: the session filter keeps it out of the stream.
    const other = await calls.start(user.id, assembledCall({ contact: { name: 'Other' } }), null);
    const { sessionId } = await calls.start(user.id, assembledCall(), `${receiver.url}/calls?user=${user.id}`);
    const sse = await stream(t, user.token, `call_status?session_id=${sessionId}`, {
      headers: { 'last-event-id': '0' },
    });

    const events = await sse.waitForEvents(4, 20_000);
    sse.close();
    const payloads = events.map((e) => JSON.parse(e.data));
    expect(events.every((e) => e.event === 'call_status')).toBe(true);
    expect(payloads.map((p) => p.status)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
    // As the document publishes them (CallStatusEvent).
    for (const payload of payloads) expect(eventPayloadErrors('call_status', payload)).toEqual([]);
    expect(payloads.every((p) => p.session_id === sessionId && !Number.isNaN(Date.parse(p.at)))).toBe(true);
    const completed = payloads[3];
    expect(completed.duration_seconds).toBeGreaterThanOrEqual(1);
    expect(completed.transcript).toEqual([
      { role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' },
      { role: 'contact', text: 'Hi, this is Grace. Yes, now is a good time.' },
    ]);
    expect(payloads.slice(0, 3).every((p) => p.transcript === undefined && p.duration_seconds === undefined)).toBe(
      true,
    );

    // The same payloads as webhooks, each signed with the user's secret, one delivery per status.
    await receiver.waitFor((all) => all.filter((r) => r.path.includes(user.id)).length >= 4);
    const hooks = receiver.received.filter((r) => r.path.includes(user.id));
    expect(hooks).toHaveLength(4);
    const bodies = hooks.map(
      (r) =>
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
          type: string;
          data: { status: string };
        },
    );
    expect(bodies.every((b) => b.type === 'call_status')).toBe(true);
    expect(new Set(bodies.map((b) => JSON.stringify(b.data)))).toEqual(new Set(payloads.map((p) => JSON.stringify(p))));

    // Usage: one call and its seconds, once.
    await eventually(async () => (await session(sessionId)).finished_at !== null, 5000, 'call accounted for');
    expect(usage.calls.filter((u) => u.ref.startsWith(`call:${sessionId}`))).toEqual([
      { userId: user.id, kind: 'calls_outbound', quantity: 1, ref: `call:${sessionId}` },
      {
        userId: user.id,
        kind: 'seconds_outbound',
        quantity: completed.duration_seconds,
        ref: `call:${sessionId}:seconds`,
      },
    ]);

    // The encrypted record in the calls store.
    await eventually(
      async () => (await session(other.sessionId)).finished_at !== null,
      5000,
      'other call accounted for',
    );
    const records = await callRecords(t, user);
    const record = records.find((r) => r.session_id === sessionId)!;
    expect(record).toMatchObject({
      session_id: sessionId,
      status: 'completed',
      to: '+14155550123',
      from: '+14155550100',
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
      duration_seconds: completed.duration_seconds,
      transcript: completed.transcript,
      ended_at: completed.at,
    });
    expect(records.map((r) => r.session_id).sort()).toEqual([sessionId, other.sessionId].sort());
    expect((await session(sessionId)).record_object_id).toBeTruthy();
    expect(await session(sessionId)).toMatchObject({
      status: 'completed',
      duration_seconds: completed.duration_seconds,
    });
  });

  it('an unanswered call ends as no_answer: no usage, a record all the same', async () => {
    const user = await createFundedUser(t);
    const { sessionId } = await calls.start(user.id, assembledCall({ to: '+14155550000' }), null);
    await eventually(async () => (await session(sessionId)).finished_at !== null, 5000, 'call accounted for');
    expect((await statusEvents(user.id, sessionId)).map((p) => p.status)).toEqual(['queued', 'ringing', 'no_answer']);
    expect(usage.calls.filter((u) => u.ref.startsWith(`call:${sessionId}`))).toEqual([]);
    expect((await callRecords(t, user)).map((r) => r.status)).toEqual(['no_answer']);
  });

  it('refuses webhook URLs that are not http(s) before starting anything', async () => {
    const user = await createFundedUser(t);
    await expect(calls.start(user.id, assembledCall(), 'ftp://example.com/hook')).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
  });
});

describe('progress reports: replays, duplicates, order and forgeries', () => {
  async function finishedSession() {
    const user = await createFundedUser(t);
    const { sessionId } = await calls.start(user.id, assembledCall(), `${receiver.url}/dup/${randomUUID()}`);
    await eventually(async () => (await session(sessionId)).finished_at !== null, 5000, 'call accounted for');
    return { user, sessionId };
  }

  it('a completed report replayed, or sent again under other ids, concurrently, changes nothing', async () => {
    const { user, sessionId } = await finishedSession();
    const before = {
      events: await statusEvents(user.id, sessionId),
      usage: usage.calls.length,
      records: (await callRecords(t, user)).length,
      deliveries: await t.database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('user_id', '=', user.id)
        .execute(),
    };
    const body = { status: 'completed', at: new Date(t.clock.now()).toISOString(), duration_seconds: 99 };
    const replay = signedReport(body, 'evt_same');
    await Promise.all([
      ...Array.from({ length: 5 }, () => calls.handleAudioReport(sessionId, replay.raw, replay.headers)),
      ...Array.from({ length: 5 }, () => {
        const r = signedReport(body);
        return calls.handleAudioReport(sessionId, r.raw, r.headers);
      }),
    ]);
    expect(await statusEvents(user.id, sessionId)).toEqual(before.events);
    expect(usage.calls.length).toBe(before.usage);
    expect((await callRecords(t, user)).length).toBe(before.records);
    expect(
      await t.database.db.selectFrom('webhook_deliveries').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual(before.deliveries);
    expect((await session(sessionId)).duration_seconds).not.toBe(99);
  });

  it('concurrent final reports for a live call: exactly one wins, with one event, one delivery and usage once', async () => {
    const user = await createFundedUser(t);
    // A session the sandbox is not playing: recorded as start() does, then driven by reports only.
    const { sessionId } = await calls.start(user.id, assembledCall({ to: '+14155550000' }), null);
    await eventually(async () => (await session(sessionId)).finished_at !== null, 5000, 'first call done');
    const id = randomUUID();
    // Authorized as start() does, so the call has a charge to settle.
    expect(
      await charges.authorizeCall(user.id, { ref: id, direction: 'outbound', number: '+14155550123' }),
    ).toMatchObject({ ok: true });
    await t.database.db
      .insertInto('call_sessions')
      .values({
        ...(await session(sessionId)),
        id,
        status: 'in_progress',
        finished_at: null,
        record_object_id: null,
        webhook_url: `${receiver.url}/race/${id}`,
      })
      .execute();
    const reports = Array.from({ length: 8 }, (_, i) =>
      signedReport({ status: 'completed', at: new Date(t.clock.now()).toISOString(), duration_seconds: 10 + i }),
    );
    await Promise.all(reports.map((r) => calls.handleAudioReport(id, r.raw, r.headers)));
    const finals = (await statusEvents(user.id, id)).filter((p) => p.status === 'completed');
    expect(finals).toHaveLength(1);
    const row = await session(id);
    expect(row.duration_seconds).toBe(finals[0].duration_seconds);
    expect(usage.calls.filter((u) => u.ref.startsWith(`call:${id}`))).toEqual([
      { userId: user.id, kind: 'calls_outbound', quantity: 1, ref: `call:${id}` },
      { userId: user.id, kind: 'seconds_outbound', quantity: finals[0].duration_seconds, ref: `call:${id}:seconds` },
    ]);
    expect(
      await t.database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('url', '=', `${receiver.url}/race/${id}`)
        .execute(),
    ).toHaveLength(1);
  });

  it('a report of an earlier status after a later one is kept but does not move the session back', async () => {
    const { user, sessionId } = await finishedSession();
    const before = await statusEvents(user.id, sessionId);
    const r = signedReport({ status: 'ringing', at: new Date(t.clock.now()).toISOString() });
    await calls.handleAudioReport(sessionId, r.raw, r.headers);
    expect((await session(sessionId)).status).toBe('completed');
    expect(await statusEvents(user.id, sessionId)).toEqual(before);
  });

  it('refuses forged, tampered and stale reports (400 invalid_token) and changes nothing', async () => {
    const user = await createFundedUser(t);
    const id = randomUUID();
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        status: 'ringing',
        webhook_url: null,
        summary: '{}',
        provider_call_id: null,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: t.clock.now(),
        updated_at: t.clock.now(),
      })
      .execute();
    const body = { status: 'completed', at: new Date(t.clock.now()).toISOString(), duration_seconds: 5 };
    const forged = signedReport(body, undefined, `whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    const good = signedReport(body);
    const tampered = { raw: Buffer.from(JSON.stringify({ ...body, duration_seconds: 5000 })), headers: good.headers };
    const stale = {
      raw: good.raw,
      headers: { ...signWebhook([AUDIO_SECRET], 'evt_old', t.clock.now() - 10 * 60_000, good.raw) },
    };
    const unsigned = { raw: good.raw, headers: {} };
    for (const attempt of [forged, tampered, stale, unsigned]) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/audio/${id}`,
        headers: { 'content-type': 'application/json', ...attempt.headers },
        payload: attempt.raw,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_token');
    }
    expect((await session(id)).status).toBe('ringing');
    expect(await statusEvents(user.id, id)).toEqual([]);
    expect(await t.database.db.selectFrom('call_progress').select('id').where('session_id', '=', id).execute()).toEqual(
      [],
    );

    // The genuine report through the route: accepted once, replay answered 204 without effect.
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/audio/${id}`,
        headers: { 'content-type': 'application/json', ...good.headers },
        payload: good.raw,
      });
      expect(res.statusCode).toBe(204);
    }
    expect((await statusEvents(user.id, id)).map((p) => p.status)).toEqual(['completed']);
  });

  it('answers 404 for an unknown session and 400 for a signed report that is not a report', async () => {
    const user = await createFundedUser(t);
    const good = signedReport({ status: 'completed', at: new Date(t.clock.now()).toISOString() });
    const unknown = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/audio/${randomUUID()}`,
      headers: { 'content-type': 'application/json', ...good.headers },
      payload: good.raw,
    });
    expect(unknown.statusCode).toBe(404);
    const { sessionId } = await calls.start(user.id, assembledCall({ to: '+14155550000' }), null);
    for (const body of [
      { status: 'exploded', at: new Date().toISOString() },
      { status: 'completed', at: 'yesterday' },
      { status: 'completed', at: new Date().toISOString(), duration_seconds: -1 },
      { status: 'completed', at: new Date().toISOString(), transcript: [{ role: 'narrator', text: 'x' }] },
    ]) {
      const r = signedReport(body);
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/audio/${sessionId}`,
        headers: { 'content-type': 'application/json', ...r.headers },
        payload: r.raw,
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('invalid_input');
    }
  });
});

describe('calls that ended while their process stopped', () => {
  it('finishAbandoned() accounts for them once: usage, record and mark', async () => {
    const user = await createFundedUser(t);
    const id = randomUUID();
    const ended = t.clock.now() - 10 * 60_000;
    const summary = JSON.stringify({
      to: '+14155550123',
      from: null,
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
    });
    expect(
      await charges.authorizeCall(user.id, { ref: id, direction: 'outbound', number: '+14155550123' }),
    ).toMatchObject({ ok: true });
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        status: 'completed',
        webhook_url: null,
        summary,
        provider_call_id: null,
        duration_seconds: 61,
        finished_at: null,
        record_object_id: null,
        created_at: ended - 70_000,
        updated_at: ended,
      })
      .execute();
    const transcript = [{ role: 'agent', text: 'Hello.' }];
    await t.database.db
      .insertInto('call_progress')
      .values({
        id: 'evt_abandoned',
        session_id: id,
        status: 'completed',
        payload: JSON.stringify({
          session_id: id,
          status: 'completed',
          at: new Date(ended).toISOString(),
          duration_seconds: 61,
          transcript,
        }),
        received_at: ended,
      })
      .execute();
    expect(await calls.finishAbandoned()).toBeGreaterThanOrEqual(1);
    expect(await calls.finishAbandoned()).toBe(0);
    expect(usage.calls.filter((u) => u.ref.startsWith(`call:${id}`)).map((u) => [u.kind, u.quantity])).toEqual([
      ['calls_outbound', 1],
      ['seconds_outbound', 61],
    ]);
    // Its hold (an hour to the US, 84 cents) is settled once for 2 started minutes: 2.8 → 3 cents.
    const ledger = await t.database.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    expect(ledger.map((r) => [r.reason, Number(r.cents)])).toEqual([
      ['topup', 500],
      ['hold', -84],
      ['release', 81],
    ]);
    expect(await callRecords(t, user)).toMatchObject([
      { session_id: id, status: 'completed', duration_seconds: 61, transcript },
    ]);
    expect((await session(id)).finished_at).not.toBeNull();
  });
});

describe('calls whose audio server went quiet', () => {
  it('failStalled() ends them as failed once, with the event and the record, after two hours without a report', async () => {
    const user = await createFundedUser(t);
    const id = randomUUID();
    const quietSince = t.clock.now() - STALLED_AFTER_MS - 1000;
    const summary = JSON.stringify({
      to: '+14155550123',
      from: null,
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
    });
    expect(
      await charges.authorizeCall(user.id, { ref: id, direction: 'outbound', number: '+14155550123' }),
    ).toMatchObject({ ok: true });
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        status: 'ringing',
        webhook_url: null,
        summary,
        provider_call_id: null,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: quietSince - 5000,
        updated_at: quietSince,
      })
      .execute();
    const recent = randomUUID();
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id: recent,
        user_id: user.id,
        status: 'in_progress',
        webhook_url: null,
        summary,
        provider_call_id: null,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: t.clock.now() - 60_000,
        updated_at: t.clock.now() - 60_000,
      })
      .execute();
    expect(await calls.failStalled()).toBeGreaterThanOrEqual(1);
    expect(await calls.failStalled()).toBe(0);
    expect((await statusEvents(user.id, id)).map((p) => p.status)).toEqual(['failed']);
    expect(await session(id)).toMatchObject({ status: 'failed' });
    expect((await session(id)).finished_at).not.toBeNull();
    expect((await session(recent)).status).toBe('in_progress');
    expect(usage.calls.filter((u) => u.ref.startsWith(`call:${id}`))).toEqual([]);
    expect((await callRecords(t, user)).filter((r) => r.session_id === id)).toMatchObject([{ status: 'failed' }]);
  });
});

describe('reports arriving together', () => {
  it("applies many sessions' reports of one moment once each, a session's reports in order, a repeat once", async () => {
    const user = await createFundedUser(t);
    const summary = JSON.stringify({
      to: '+14155550123',
      from: null,
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
    });
    const ids = Array.from({ length: 12 }, () => randomUUID());
    for (const id of ids) {
      await t.database.db
        .insertInto('call_sessions')
        .values({
          id,
          user_id: user.id,
          status: 'created',
          webhook_url: null,
          summary,
          provider_call_id: null,
          duration_seconds: null,
          finished_at: null,
          record_object_id: null,
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })
        .execute();
    }
    const at = new Date(t.clock.now()).toISOString();
    const post = (id: string, status: string, messageId = `evt_${randomUUID()}`) => {
      const r = signedReport({ status, at }, messageId);
      return calls.handleAudioReport(id, r.raw, r.headers);
    };
    // One turn: every session's ringing; the first session also in_progress after it; a repeated message id; an unknown session.
    const repeat = `evt_${randomUUID()}`;
    const results = await Promise.allSettled([
      ...ids.map((id) => post(id, 'ringing')),
      post(ids[0]!, 'in_progress'),
      post(ids[1]!, 'ringing', repeat),
      post(ids[1]!, 'ringing', repeat),
      post(randomUUID(), 'ringing'),
    ]);
    expect(results.slice(0, -1).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results.at(-1)).toMatchObject({ status: 'rejected', reason: { code: 'not_found' } });
    expect((await statusEvents(user.id, ids[0]!)).map((p) => p.status)).toEqual(['ringing', 'in_progress']);
    expect((await session(ids[0]!)).status).toBe('in_progress');
    for (const id of ids.slice(1)) {
      expect(
        (await statusEvents(user.id, id)).map((p) => p.status),
        id,
      ).toEqual(['ringing']);
      expect((await session(id)).status).toBe('ringing');
    }
  });
});
