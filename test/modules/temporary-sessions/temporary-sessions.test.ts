// Temporary test calls (spec 3.4, 4.14) end to end through the sandbox
// outbox: PUT sends a code by SMS and returns a key, POST with the code
// starts a one-off call from a leased temporary number, the call runs to
// completed on the session's event stream, the number goes back to the pool
// and the summary is emailed. Keys: used once (also concurrently), 5 tries,
// expiry, forgery, another account's; pool exhaustion; rate limits;
// Idempotency-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { callConfig } from '../calls/support.js';
import { eventually, stream } from '../events/support.js';

const POOL = ['+15005550101', '+15005550102'];
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { ...callConfig(), temporarySessions: { numbers: POOL, callTypesFile: null } } });
});
afterAll(async () => {
  await t?.close();
});

let phoneSeq = 0;
/** A fresh phone per test, so per-phone limits of one test do not touch another. */
const freshPhone = () => `+1415556${String(1000 + ((Date.now() + ++phoneSeq) % 8999)).padStart(4, '0')}`;

const put = (app: TestApp, user: TestUser, payload: object, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'PUT',
    url: '/api/session/temporary',
    headers: { ...bearer(user.token), ...headers },
    payload,
  });
const post = (app: TestApp, user: TestUser, payload: object, headers: Record<string, string> = {}) =>
  app.app.inject({
    method: 'POST',
    url: '/api/session/temporary',
    headers: { ...bearer(user.token), ...headers },
    payload,
  });

async function outbox(app: TestApp, to: string) {
  const res = await app.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(to)}` });
  expect(res.statusCode).toBe(200);
  return res.json() as Array<{ channel: string; subject?: string; body: string; data: Record<string, unknown> }>;
}

/** PUT, then the code from the SMS the sandbox sent. */
async function requestKey(
  app: TestApp,
  user: TestUser,
  phone = freshPhone(),
  type = 'appointment-reminder',
): Promise<{ key: string; code: string; phone: string }> {
  const res = await put(app, user, { phone, type });
  expect(res.statusCode, res.body).toBe(200);
  const [sms] = await outbox(app, phone);
  expect(sms).toMatchObject({ channel: 'sms', data: { purpose: 'temporary-session' } });
  expect(sms!.body).toContain(String(sms!.data.code));
  return { key: res.json().key, code: String(sms!.data.code), phone };
}

const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const leases = (app: TestApp) => app.database.db.selectFrom('temporary_number_leases').selectAll().execute();

describe('GET /api/session/temporary', () => {
  it('lists the call types (id, name, description only)', async () => {
    const user = await createVerifiedUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/session/temporary', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    const { types } = res.json();
    expect(types.map((x: { id: string }) => x.id)).toContain('appointment-reminder');
    for (const type of types) expect(Object.keys(type).sort()).toEqual(['description', 'id', 'name']);
  });

  it('needs a phone-verified account', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/session/temporary' })).statusCode).toBe(401);
  });
});

describe('temporary session, end to end', () => {
  it('code by SMS → call from a pool number to completed → number back in the pool, summary emailed; the key works once', async () => {
    const user = await createVerifiedUser(t);
    const { key, code, phone } = await requestKey(t, user);
    const email = `summary-${Date.now()}@example.com`;

    const bad = await post(t, user, { key, code: wrong(code), email });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_code');

    const res = await post(t, user, { key, code, email }, { 'idempotency-key': `temp-${phone}` });
    expect(res.statusCode, res.body).toBe(200);
    const { sessionId } = res.json();
    // A retry with the same Idempotency-Key answers the same session and starts nothing.
    const retry = await post(t, user, { key, code, email }, { 'idempotency-key': `temp-${phone}` });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json().sessionId).toBe(sessionId);

    const sse = await stream(t, user.token, `call_status?session_id=${sessionId}`, {
      headers: { 'last-event-id': '0' },
    });
    const events = (await sse.waitForEvents(4, 20_000)).map((e) => JSON.parse(e.data));
    sse.close();
    expect(events.map((e) => e.status)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);

    const session = await t.database.db
      .selectFrom('call_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    const summary = JSON.parse(session.summary);
    expect(summary.to).toBe(phone);
    expect(POOL).toContain(summary.from);

    await eventually(async () => (await outbox(t, email)).length === 1, 10_000, 'summary email');
    const [mail] = await outbox(t, email);
    expect(mail).toMatchObject({
      channel: 'email',
      subject: 'Your test call: Appointment reminder',
      data: { sessionId, status: 'completed' },
    });
    expect(mail!.body).toContain('Agent: Hi, this is Amy from Bright Smile Dental');
    expect((await leases(t)).filter((l) => l.session_id === sessionId)).toEqual([]);

    // The key is spent: without the Idempotency-Key it is refused.
    const again = await post(t, user, { key, code, email });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_token');
    expect(again.json().message).toContain('already used');
    expect(
      await t.database.db.selectFrom('temporary_sessions').selectAll().where('user_id', '=', user.id).execute(),
    ).toHaveLength(1);

    // The summary is sent once, even if the end is handled again (housekeeping's backstop).
    await t.services.temporarySessions.temporary.housekeep(t.clock.now());
    expect(await outbox(t, email)).toHaveLength(1);
  }, 40_000);

  it("is the operator's cost: a user with no balance and no plan gets the code and the call; no hold, no charge, no usage", async () => {
    const user = await createVerifiedUser(t);
    const { key, code } = await requestKey(t, user);
    const res = await post(t, user, { key, code, email: `free-${Date.now()}@example.com` });
    expect(res.statusCode, res.body).toBe(200);
    const { sessionId } = res.json();
    await eventually(
      async () =>
        (
          await t.database.db
            .selectFrom('call_sessions')
            .select('finished_at')
            .where('id', '=', sessionId)
            .executeTakeFirstOrThrow()
        ).finished_at !== null,
      10_000,
      'call accounted for',
    );
    expect(
      await t.database.db.selectFrom('call_charges').select('ref').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    expect(
      await t.database.db.selectFrom('credit_ledger').select('ref').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    const state = (
      await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })
    ).json();
    expect(state.usageRaw).toMatchObject({ calls_outbound: 0, seconds_outbound: 0 });
    expect(state.balance.amount).toBe(0);
  }, 40_000);

  it('of two concurrent submissions of one key, exactly one starts a call', async () => {
    const user = await createVerifiedUser(t);
    const { key, code } = await requestKey(t, user);
    const answers = await Promise.all([0, 1, 2].map(() => post(t, user, { key, code, email: 'race@example.com' })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400, 400]);
    for (const a of answers.filter((x) => x.statusCode === 400)) expect(a.json().code).toBe('invalid_token');
    expect(
      await t.database.db.selectFrom('temporary_sessions').selectAll().where('user_id', '=', user.id).execute(),
    ).toHaveLength(1);
  });

  it('5 wrong codes end the key: the right code after them is refused', async () => {
    const user = await createVerifiedUser(t);
    const { key, code } = await requestKey(t, user);
    for (let i = 0; i < 5; i++)
      expect((await post(t, user, { key, code: wrong(code), email: 'x@example.com' })).json().code).toBe(
        'invalid_code',
      );
    const sixth = await post(t, user, { key, code, email: 'x@example.com' });
    expect(sixth.statusCode).toBe(400);
    expect(sixth.json().code).toBe('too_many_attempts');
  });

  it('4 wrong codes leave the 5th try to the right code', async () => {
    const user = await createVerifiedUser(t);
    const { key, code } = await requestKey(t, user);
    for (let i = 0; i < 4; i++) await post(t, user, { key, code: wrong(code), email: 'x@example.com' });
    expect((await post(t, user, { key, code, email: 'x@example.com' })).statusCode).toBe(200);
  });

  it("refuses an expired, a tampered, a forged and another account's key", async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const { key, code } = await requestKey(t, user);
    const [header, payload, signature] = key.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, phone: '+14155559999' })).toString('base64url')}.${signature}`;
    const forged = `${header}.${payload}.${Buffer.from('not the signature at all, not at all').toString('base64url')}`;
    for (const [who, k, why] of [
      [user, tampered, 'signature'],
      [user, forged, 'signature'],
      [other, key, 'another account'],
      [user, 'not-a-key', 'not a key'],
    ] as const) {
      const res = await post(t, who, { key: k, code, email: 'x@example.com' });
      expect(res.statusCode, why).toBe(400);
      expect(res.json().code).toBe('invalid_token');
    }
    // The code hash in the key is keyed by the server: the key does not give the code away.
    expect(JSON.stringify(claims)).not.toContain(code);

    t.clock.advance(10 * 60_000 + 5_000);
    try {
      const late = await post(t, user, { key, code, email: 'x@example.com' });
      expect(late.statusCode).toBe(400);
      expect(late.json().message).toContain('expired');
    } finally {
      t.clock.advance(-(10 * 60_000 + 5_000));
    }
  });

  it('refuses a phone that is not E.164 and an unknown type, sending nothing', async () => {
    const user = await createVerifiedUser(t);
    const badPhone = await put(t, user, { phone: '0415 555', type: 'appointment-reminder' });
    expect(badPhone.statusCode).toBe(400);
    const phone = freshPhone();
    const badType = await put(t, user, { phone, type: 'telemarketing' });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().message).toContain('appointment-reminder');
    expect(await outbox(t, phone)).toEqual([]);
  });

  it('limits codes per phone, and an Idempotency-Key retry sends no second SMS', async () => {
    const user = await createVerifiedUser(t);
    const phone = freshPhone();
    const first = await put(t, user, { phone, type: 'appointment-reminder' }, { 'idempotency-key': `put-${phone}` });
    const retry = await put(t, user, { phone, type: 'appointment-reminder' }, { 'idempotency-key': `put-${phone}` });
    expect(retry.json().key).toBe(first.json().key);
    expect(await outbox(t, phone)).toHaveLength(1);
    const limit = relaxedIpLimits.temporarySessionPerPhone.limit;
    const others = await Promise.all(
      Array.from({ length: limit }, async () =>
        put(t, await createVerifiedUser(t), { phone, type: 'appointment-reminder' }),
      ),
    );
    expect(others.map((r) => r.statusCode).sort()).toEqual([...Array(limit - 1).fill(200), 429]);
    expect(await outbox(t, phone)).toHaveLength(limit);
  });
});

describe('the temporary number pool', () => {
  let small: TestApp;
  beforeAll(async () => {
    // One number, and a sandbox call slow enough to hold it.
    small = await createTestApp({
      config: {
        ...callConfig({ sandboxStepMs: 60_000 }),
        temporarySessions: { numbers: ['+15005550109'], callTypesFile: null },
      },
    });
  });
  afterAll(async () => {
    await small?.close();
  });

  it("answers 503 numbers_busy while every number is in a call, keeps the key, and a lease past its call's longest duration is taken over", async () => {
    const user = await createVerifiedUser(small);
    const a = await requestKey(small, user);
    const b = await requestKey(small, user);
    const first = await post(small, user, { key: a.key, code: a.code, email: 'a@example.com' });
    expect(first.statusCode, first.body).toBe(200);
    expect(await leases(small)).toMatchObject([{ number: '+15005550109', session_id: first.json().sessionId }]);

    const busy = await post(small, user, { key: b.key, code: b.code, email: 'b@example.com' });
    expect(busy.statusCode).toBe(503);
    expect(busy.json().code).toBe('numbers_busy');
    expect(busy.headers['retry-after']).toBe('60');

    // The first call never reports its end: after 180 s (its longest) and the margin, its number may be leased again.
    small.clock.advance(8 * 60_000 + 1000);
    const later = await post(small, user, { key: b.key, code: b.code, email: 'b@example.com' });
    expect(later.statusCode, later.body).toBe(200);
    expect(await leases(small)).toMatchObject([{ number: '+15005550109', session_id: later.json().sessionId }]);
  });
});
