import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskPhone } from '../../../src/modules/auth/verification-service.js';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MINUTE = 60_000;

const post = (url: string, token: string | null, payload?: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url,
    headers: token ? bearer(token) : {},
    ...(payload === undefined ? {} : { payload }),
  });
const requestCode = (token: string, payload?: Record<string, unknown>) =>
  post('/api/auth/verify/request', token, payload);
const submitCode = (token: string, code: string) => post('/api/auth/verify/submit', token, { code });
const getAuth = (token: string) => t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) });
const userRow = (id: string) =>
  t.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const codeRows = (userId: string) =>
  t.database.db.selectFrom('phone_codes').selectAll().where('user_id', '=', userId).execute();
const actions = async (id: string) =>
  (await t.services.platform.audit.listForUser(id)).map((e) => `${e.action}:${Number(e.success)}`);

/** The newest SMS the sandbox sent to `phone`, read through the outbox route. */
async function latestSms(phone: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(phone)}&limit=1` });
  expect(res.statusCode).toBe(200);
  const [item] = res.json();
  expect(item).toMatchObject({ channel: 'sms', to: phone });
  return item as { body: string; data: { code: string } };
}
const latestCode = async (phone: string) => (await latestSms(phone)).data.code;
/** A 6-digit code that differs from `code`. */
const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

/** Requests a code for the number on record and returns it. */
async function sendCode(user: TestUser): Promise<string> {
  const res = await requestCode(user.token);
  expect(res.statusCode).toBe(200);
  return latestCode(user.phone);
}

describe('maskPhone', () => {
  it.each([
    ['+14155550123', '+1415•••0123'],
    ['+447911123456', '+4479••••3456'],
    ['+861391234567890', '+8613•••••••7890'],
    ['+1234567', '+12•••67'],
  ])('masks %s as %s', (phone, masked) => {
    expect(maskPhone(phone)).toBe(masked);
  });
});

describe('POST /api/auth/verify/request', () => {
  it('sends a 6-digit code by SMS to the number on record and stores only a hash of it', async () => {
    const user = await registerUser(t, { phone: '+14155550123' });
    const res = await requestCode(user.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'sent',
      phone: '+1415•••0123',
      expiresAt: new Date(t.clock.now() + 10 * MINUTE).toISOString(),
    });

    const sms = await latestSms('+14155550123');
    expect(sms.data.code).toMatch(/^\d{6}$/);
    expect(sms.body).toContain(sms.data.code);

    const rows = await codeRows(user.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      phone: '+14155550123',
      attempts: 0,
      consumed_at: null,
      expires_at: t.clock.now() + 10 * MINUTE,
    });
    expect(rows[0].code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows[0])).not.toContain(sms.data.code);
    expect(await actions(user.id)).toContain('phone.verify_request:1');
  });

  it('accepts a request with an empty JSON body or a content-type but no body', async () => {
    const user = await registerUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/verify/request',
      headers: { ...bearer(user.token), 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    t.clock.advance(MINUTE);
    expect((await requestCode(user.token, {})).statusCode).toBe(200);
  });

  it('sets the number for a user who has none, and answers 400 no_phone without one', async () => {
    const user = await registerUser(t);
    await t.services.auth.users.update(user.id, { phone: null });

    const none = await requestCode(user.token);
    expect(none.statusCode).toBe(400);
    expect(none.json().code).toBe('no_phone');

    const bad = await requestCode(user.token, { phone: '12345' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('invalid_input');

    const res = await requestCode(user.token, { phone: '+44 (7911) 123-456' });
    expect(res.statusCode).toBe(200);
    expect(res.json().phone).toBe('+4479••••3456');
    // The number is recorded only once it is verified.
    expect((await userRow(user.id)).phone).toBeNull();

    const verified = await submitCode(user.token, await latestCode('+447911123456'));
    expect(verified.json().status).toBe('ok');
    expect(await userRow(user.id)).toMatchObject({ phone: '+447911123456', phone_verified: 1 });
    expect(await actions(user.id)).toEqual(expect.arrayContaining(['phone.verify:1', 'phone.change:1']));
  });

  it('limits new codes to one per number per minute with 429 and Retry-After', async () => {
    const user = await registerUser(t);
    expect((await requestCode(user.token)).statusCode).toBe(200);
    t.clock.advance(20_000);
    const again = await requestCode(user.token);
    expect(again.statusCode).toBe(429);
    expect(again.json().code).toBe('rate_limited');
    expect(Number(again.headers['retry-after'])).toBe(40);

    // The limit is per number: another number of the same user may get a code.
    expect((await requestCode(user.token, { phone: '+14155559876' })).statusCode).toBe(200);
    t.clock.advance(40_000);
    expect((await requestCode(user.token)).statusCode).toBe(200);
  });

  it('limits codes per user (verifyRequestPerUser) across numbers', async () => {
    const user = await registerUser(t);
    const { limit } = t.config.rateLimits.verifyRequestPerUser;
    for (let i = 0; i < limit; i++) {
      expect((await requestCode(user.token, { phone: `+1202555${String(1000 + i)}` })).statusCode).toBe(200);
    }
    const res = await requestCode(user.token, { phone: '+12025559999' });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // Other users are not affected.
    const other = await registerUser(t);
    expect((await requestCode(other.token)).statusCode).toBe(200);
  });

  it('needs credentials, and 2FA passed when configured', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/verify/request' })).statusCode).toBe(401);
    const user = await createVerifiedUser(t);
    await t.services.auth.users.update(user.id, { two_factor_enabled: 1 });
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email, password: user.password, remember: false },
    });
    expect(login.json().status).toBe('2fa_required');
    const res = await requestCode(login.json().token);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('two_factor_required');
  });
});

describe('POST /api/auth/verify/submit', () => {
  it('verifies the phone: phone_not_verified → ok through GET /api/auth, with a new token and cookie', async () => {
    const user = await registerUser(t);
    expect((await getAuth(user.token)).json()).toMatchObject({
      status: 'phone_not_verified',
      auth: { phoneVerified: false },
    });
    const guarded = await t.app.inject({ method: 'DELETE', url: '/api/api-keys/none', headers: bearer(user.token) });
    expect(guarded.json().code).toBe('phone_not_verified');

    const code = await sendCode(user);
    const res = await submitCode(user.token, code);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'ok',
      auth: { id: user.id, phoneVerified: true, twoFactorConfigured: false },
    });
    expect(body.token).not.toBe(user.token);
    expect(res.cookies.find((c) => c.name === 'token')).toMatchObject({
      value: body.token,
      httpOnly: true,
      maxAge: t.config.sessionTtlSeconds,
    });

    expect((await getAuth(body.token)).json()).toMatchObject({ status: 'ok', auth: { phoneVerified: true } });
    // The refreshed session replaces the old one.
    expect((await getAuth(user.token)).statusCode).toBe(401);
    expect(await userRow(user.id)).toMatchObject({ phone: user.phone, phone_verified: 1 });
    const log = await actions(user.id);
    expect(log).toContain('phone.verify:1');
    expect(log).not.toContain('phone.change:1');
  });

  it('accepts a code once only', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    const first = await submitCode(user.token, code);
    expect(first.statusCode).toBe(200);
    const again = await submitCode(first.json().token, code);
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_code');
  });

  it('answers invalid_code for a wrong code and when no code was requested', async () => {
    const user = await registerUser(t);
    const none = await submitCode(user.token, '123456');
    expect(none.statusCode).toBe(400);
    expect(none.json().code).toBe('invalid_code');

    const code = await sendCode(user);
    const wrong = await submitCode(user.token, otherCode(code));
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ code: 'invalid_code', message: expect.stringContaining('4 tries left') });
    expect((await getAuth(user.token)).json().status).toBe('phone_not_verified');
    expect(await actions(user.id)).toContain('phone.verify:0');
  });

  it('allows 5 tries per code: the right code still works on the 5th try', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    for (let i = 0; i < 4; i++)
      expect((await submitCode(user.token, otherCode(code))).json().code).toBe('invalid_code');
    expect((await submitCode(user.token, code)).json().status).toBe('ok');
  });

  it('kills the code after 5 wrong tries (too_many_attempts, even for the right code) until a new one is requested', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    for (let i = 0; i < 5; i++)
      expect((await submitCode(user.token, otherCode(code))).json().code).toBe('invalid_code');
    const dead = await submitCode(user.token, code);
    expect(dead.statusCode).toBe(400);
    expect(dead.json().code).toBe('too_many_attempts');
    expect((await codeRows(user.id))[0].attempts).toBe(5);

    t.clock.advance(MINUTE);
    const fresh = await sendCode(user);
    expect((await submitCode(user.token, fresh)).json().status).toBe('ok');
  });

  it('expires a code after 10 minutes', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    t.clock.advance(10 * MINUTE);
    const res = await submitCode(user.token, code);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('code_expired');
  });

  it('still accepts a code just before it expires', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    t.clock.advance(10 * MINUTE - 1000);
    expect((await submitCode(user.token, code)).json().status).toBe('ok');
  });

  it('supersedes earlier codes with a new request', async () => {
    const user = await registerUser(t);
    const first = await sendCode(user);
    t.clock.advance(MINUTE);
    let second = await sendCode(user);
    // One in a million: the new code equals the old one; draw again.
    while (second === first) {
      t.clock.advance(MINUTE);
      second = await sendCode(user);
    }
    expect(await codeRows(user.id)).toHaveLength(1);
    expect((await submitCode(user.token, first)).json().code).toBe('invalid_code');
    expect((await submitCode(user.token, second)).json().status).toBe('ok');
  });

  it('changes the number of a verified user only once the new number is confirmed', async () => {
    const user = await createVerifiedUser(t, { phone: '+14155550111' });
    const res = await requestCode(user.token, { phone: '+14155550222' });
    expect(res.json().phone).toBe('+1415•••0222');
    expect(await userRow(user.id)).toMatchObject({ phone: '+14155550111', phone_verified: 1 });

    const done = await submitCode(user.token, await latestCode('+14155550222'));
    expect(done.json().status).toBe('ok');
    expect(await userRow(user.id)).toMatchObject({ phone: '+14155550222', phone_verified: 1 });
    const change = (await t.services.platform.audit.listForUser(user.id)).find((e) => e.action === 'phone.change');
    expect(JSON.parse(change!.detail!)).toEqual({ from: '+1415•••0111', to: '+1415•••0222' });
  });

  it('keeps the remember lifetime of the session it refreshes', async () => {
    const user = await registerUser(t, { remember: true });
    const res = await submitCode(user.token, await sendCode(user));
    expect(res.cookies.find((c) => c.name === 'token')?.maxAge).toBe(t.config.rememberTtlSeconds);
  });

  it('limits submissions per user (verifySubmitPerUser) with 429', async () => {
    const user = await registerUser(t);
    const code = await sendCode(user);
    const { limit } = t.config.rateLimits.verifySubmitPerUser;
    for (let i = 0; i < limit; i++) expect((await submitCode(user.token, otherCode(code))).statusCode).toBe(400);
    const res = await submitCode(user.token, code);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('refuses a missing or oversized code with 400 invalid_input', async () => {
    const user = await registerUser(t);
    expect((await post('/api/auth/verify/submit', user.token, {})).json().code).toBe('invalid_input');
    expect((await submitCode(user.token, '1'.repeat(100))).json().code).toBe('invalid_input');
  });
});

describe('per-IP limit', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({
      config: { rateLimits: { ...relaxedIpLimits, verifyRequestPerIp: { limit: 2, windowMs: 60 * MINUTE } } },
    });
  });
  afterAll(() => small.close());

  it('limits code requests per IP (verifyRequestPerIp)', async () => {
    const send = (token: string, ip: string) =>
      small.app.inject({ method: 'POST', url: '/api/auth/verify/request', headers: bearer(token), remoteAddress: ip });
    const users = [await registerUser(small), await registerUser(small), await registerUser(small)];
    expect((await send(users[0].token, '203.0.113.7')).statusCode).toBe(200);
    expect((await send(users[1].token, '203.0.113.7')).statusCode).toBe(200);
    const third = await send(users[2].token, '203.0.113.7');
    expect(third.statusCode).toBe(429);
    expect(third.json().code).toBe('rate_limited');
    expect((await send(users[2].token, '203.0.113.8')).statusCode).toBe(200);
  });
});
