import { Secret, TOTP, URI } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto.js';
import { canonicalRecoveryCode, matchTotpStep } from '../../../src/modules/auth/two-factor-service.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const STEP_MS = 30_000;

/** The code an authenticator app shows for `base32` at `ms`. */
const codeAt = (base32: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(base32) }).generate({ timestamp: ms });
const codeNow = (base32: string, stepOffset = 0) => codeAt(base32, t.clock.now() + stepOffset * STEP_MS);
/** A 6-digit code that is not the current one (nor a neighbour's). */
function wrongCode(base32: string): string {
  const taken = new Set([-1, 0, 1].map((o) => codeNow(base32, o)));
  let n = 123456;
  while (taken.has(String(n))) n += 1;
  return String(n);
}
/** Moves the clock to 5 s into the next time step, so codes are fresh and the step is not about to end. */
function nextStep() {
  const now = t.clock.now();
  t.clock.advance(STEP_MS - (now % STEP_MS) + 5_000);
}

const post = (url: string, token: string | null, payload?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url, headers: token ? bearer(token) : {}, payload });
const getAuth = (token: string) => t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) });
const login = (user: TestUser) =>
  t.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: user.email, password: user.password, remember: false },
  });
const userRow = (id: string) =>
  t.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const recoveryRows = (id: string) =>
  t.database.db.selectFrom('recovery_codes').selectAll().where('user_id', '=', id).execute();
const actions = async (id: string) =>
  (await t.services.platform.audit.listForUser(id)).map((e) => `${e.action}:${Number(e.success)}`);

/** A phone-verified user with 2FA enabled through the routes; `token` is the full session answered by enable/submit. */
async function enabledUser() {
  const user = await createVerifiedUser(t);
  nextStep();
  const { base32 } = (await post('/api/auth/2fa/enable/request', user.token)).json();
  const res = await post('/api/auth/2fa/enable/submit', user.token, { token: codeNow(base32) });
  expect(res.statusCode).toBe(200);
  nextStep();
  return {
    ...user,
    token: res.json().token as string,
    base32: base32 as string,
    recoveryCodes: res.json().recoveryCodes as string[],
  };
}

async function limitedToken(user: TestUser): Promise<string> {
  const res = await login(user);
  expect(res.json().status).toBe('2fa_required');
  return res.json().token;
}

describe('enable, login, verify', () => {
  it('runs the whole flow and keeps the limited token to any-level routes', async () => {
    const user = await createVerifiedUser(t);
    expect((await getAuth(user.token)).json()).toMatchObject({
      status: 'ok',
      auth: { twoFactorConfigured: false, twoFactorPassed: false },
    });

    nextStep();
    const setup = await post('/api/auth/2fa/enable/request', user.token);
    expect(setup.statusCode).toBe(200);
    const { status, otpauthUrl, base32 } = setup.json();
    expect(status).toBe('2fa_setup');
    expect(base32).toMatch(/^[A-Z2-7]{32}$/); // 20 bytes
    const parsed = URI.parse(otpauthUrl) as TOTP;
    expect(parsed).toBeInstanceOf(TOTP);
    expect(parsed).toMatchObject({ issuer: 'Workspace', label: user.email, algorithm: 'SHA1', digits: 6, period: 30 });
    expect(parsed.secret.base32).toBe(base32);

    let row = await userRow(user.id);
    expect(row.totp_pending_secret).not.toBeNull();
    expect(row.totp_pending_secret).not.toContain(base32);
    expect(t.services.platform.secretBox.openText(row.totp_pending_secret!)).toBe(base32);
    expect(row).toMatchObject({ totp_secret: null, two_factor_enabled: 0 });

    const wrong = await post('/api/auth/2fa/enable/submit', user.token, { token: wrongCode(base32) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ message: expect.any(String), code: 'invalid_code' });

    const enabled = await post('/api/auth/2fa/enable/submit', user.token, { token: codeNow(base32) });
    expect(enabled.statusCode).toBe(200);
    const body = enabled.json();
    expect(body).toMatchObject({
      status: 'ok',
      auth: { id: user.id, twoFactorConfigured: true, twoFactorPassed: true },
    });
    expect(body.recoveryCodes).toHaveLength(10);
    expect(new Set(body.recoveryCodes).size).toBe(10);
    for (const code of body.recoveryCodes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
    expect(enabled.cookies.find((c) => c.name === 'token')?.value).toBe(body.token);
    expect((await getAuth(user.token)).statusCode).toBe(401); // the calling token was re-issued
    expect((await getAuth(body.token)).json()).toMatchObject({
      status: 'ok',
      auth: { twoFactorConfigured: true, twoFactorPassed: true },
    });

    row = await userRow(user.id);
    expect(row).toMatchObject({ totp_pending_secret: null, two_factor_enabled: 1 });
    expect(row.totp_secret).not.toContain(base32);
    expect(t.services.platform.secretBox.openText(row.totp_secret!)).toBe(base32);
    const stored = await recoveryRows(user.id);
    expect(stored).toHaveLength(10);
    expect(JSON.stringify(stored)).not.toContain(body.recoveryCodes[0]);
    expect(JSON.stringify(stored)).not.toContain(body.recoveryCodes[0].replace('-', ''));
    expect(stored.every((r) => /^[0-9a-f]{64}$/.test(r.code_hash) && r.used_at === null)).toBe(true);

    // Login now stops at 2fa_required, with a limited token and no cookie.
    const loggedIn = await login(user);
    expect(loggedIn.statusCode).toBe(200);
    expect(loggedIn.json()).toMatchObject({
      status: '2fa_required',
      auth: { twoFactorConfigured: true, twoFactorPassed: false },
    });
    expect(loggedIn.cookies).toHaveLength(0);
    const limited = loggedIn.json().token;
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(limited) }),
      await t.app.inject({ method: 'PUT', url: '/api/api-keys', headers: bearer(limited), payload: { name: 'x' } }),
      await post('/api/auth/2fa/enable/request', limited),
      await post('/api/auth/2fa/reset', limited, { token: codeNow(base32) }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('two_factor_required');
    }
    expect((await getAuth(limited)).json()).toMatchObject({
      status: '2fa_required',
      auth: { twoFactorConfigured: true, twoFactorPassed: false },
    });

    nextStep();
    const verified = await post('/api/auth/2fa/verify', limited, { token: codeNow(base32) });
    expect(verified.statusCode).toBe(200);
    expect(verified.json()).toEqual({
      status: 'ok',
      token: expect.any(String),
      auth: expect.objectContaining({ twoFactorConfigured: true, twoFactorPassed: true }),
    });
    const full = verified.json().token;
    expect(verified.cookies.find((c) => c.name === 'token')).toMatchObject({
      value: full,
      maxAge: t.config.sessionTtlSeconds,
    });
    expect((await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(full) })).statusCode).toBe(200);
    expect((await getAuth(full)).json()).toMatchObject({ status: 'ok', auth: { twoFactorPassed: true } });
    expect((await getAuth(limited)).statusCode).toBe(401); // revoked by the refresh

    expect(await actions(user.id)).toEqual(
      expect.arrayContaining(['2fa.setup:1', '2fa.enable:0', '2fa.enable:1', '2fa.verify:1']),
    );
  });

  it('lets a limited token sign out', async () => {
    const user = await enabledUser();
    const limited = await limitedToken(user);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(limited) });
    expect(res.json()).toEqual({ status: 'logout' });
    expect((await getAuth(limited)).statusCode).toBe(401);
    expect((await post('/api/auth/2fa/verify', limited, { token: codeNow(user.base32) })).statusCode).toBe(401);
  });
});

describe('code rules', () => {
  it('accepts a code once only', async () => {
    const user = await enabledUser();
    const code = codeNow(user.base32);
    expect((await post('/api/auth/2fa/verify', await limitedToken(user), { token: code })).statusCode).toBe(200);
    const replay = await post('/api/auth/2fa/verify', await limitedToken(user), { token: code });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('invalid_code');
    expect(await actions(user.id)).toContain('2fa.verify:0');
  });

  it('allows one step of clock skew each way, not two, and never a step at or before the last accepted', async () => {
    const user = await enabledUser();
    nextStep(); // so the previous step is later than the one enable/submit accepted
    const limited = await limitedToken(user);
    const verify = (code: string) => post('/api/auth/2fa/verify', limited, { token: code });

    expect((await verify(codeNow(user.base32, -2))).statusCode).toBe(400);
    expect((await verify(codeNow(user.base32, 2))).statusCode).toBe(400);
    const previous = codeNow(user.base32, -1);
    expect((await post('/api/auth/2fa/verify', limited, { token: previous })).statusCode).toBe(200);

    const again = await limitedToken(user);
    expect((await post('/api/auth/2fa/verify', again, { token: previous })).statusCode).toBe(400);
    // A code from the next step is accepted; afterwards the current step is one already passed.
    expect((await post('/api/auth/2fa/verify', again, { token: codeNow(user.base32, 1) })).statusCode).toBe(200);
    const third = await limitedToken(user);
    expect((await post('/api/auth/2fa/verify', third, { token: codeNow(user.base32) })).statusCode).toBe(400);
    nextStep();
    nextStep(); // two steps on, the next-step code accepted above is in the past
    expect((await post('/api/auth/2fa/verify', third, { token: codeNow(user.base32) })).statusCode).toBe(200);
  });

  it('accepts each recovery code once, typed loosely', async () => {
    const user = await enabledUser();
    const [first, second] = user.recoveryCodes;
    const ok = await post('/api/auth/2fa/verify', await limitedToken(user), { token: first });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().auth.twoFactorPassed).toBe(true);
    const used = (await recoveryRows(user.id)).filter((r) => r.used_at !== null);
    expect(used).toHaveLength(1);
    expect(used[0].code_hash).not.toBe(sha256Hex(first));

    const reused = await post('/api/auth/2fa/verify', await limitedToken(user), { token: first });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().code).toBe('invalid_code');

    const loose = ` ${second.replace('-', ' ').toUpperCase()} `;
    expect((await post('/api/auth/2fa/verify', await limitedToken(user), { token: loose })).statusCode).toBe(200);
    expect((await recoveryRows(user.id)).filter((r) => r.used_at !== null)).toHaveLength(2);
  });

  it('answers 400 invalid_code for wrong or malformed codes and the schema 400 for a missing one', async () => {
    const user = await enabledUser();
    const limited = await limitedToken(user);
    for (const token of [wrongCode(user.base32), '', 'hello', '12345', 'zzzzz-zzzzz']) {
      const res = await post('/api/auth/2fa/verify', limited, { token });
      expect(res.statusCode, token).toBe(400);
      expect(res.json()).toEqual({ message: expect.any(String), code: 'invalid_code' });
    }
    const missing = await post('/api/auth/2fa/verify', limited, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('invalid_input');
    expect((await getAuth(limited)).json().status).toBe('2fa_required');
  });

  it('limits code attempts per user with 429 and Retry-After', async () => {
    const user = await enabledUser();
    const rule = t.config.rateLimits.twoFactorPerUser;
    t.clock.advance(rule.windowMs); // a fresh window, without enable/submit's attempt
    const limited = await limitedToken(user);
    for (let i = 0; i < rule.limit; i++)
      expect((await post('/api/auth/2fa/verify', limited, { token: wrongCode(user.base32) })).statusCode).toBe(400);
    const blocked = await post('/api/auth/2fa/verify', limited, { token: codeNow(user.base32) });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().code).toBe('rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);

    t.clock.advance(rule.windowMs);
    nextStep();
    expect(
      (await post('/api/auth/2fa/verify', await limitedToken(user), { token: codeNow(user.base32) })).statusCode,
    ).toBe(200);
  });

  it('matches the RFC 6238 SHA-1 test vector and reads recovery codes canonically', () => {
    const base32 = Secret.fromLatin1('12345678901234567890').base32;
    expect(matchTotpStep(base32, '287082', 59_000, null)).toBe(1); // 94287082 at T=59 s, last 6 digits
    expect(matchTotpStep(base32, '287082', 59_000, 1)).toBeNull();
    expect(matchTotpStep(base32, '287082', 59_000 + 3 * STEP_MS, null)).toBeNull();
    expect(canonicalRecoveryCode('AB1DE-0FGHJ')).toBe('ab1de0fghj');
    expect(canonicalRecoveryCode('abIde-OfghL')).toBe('ab1de0fgh1');
    expect(canonicalRecoveryCode('abcde-fghu1')).toBeNull();
    expect(canonicalRecoveryCode('abcd')).toBeNull();
  });
});

describe('reset', () => {
  it('keeps the old secret valid until the new one is confirmed, then swaps it and the recovery codes', async () => {
    const user = await enabledUser();
    const wrong = await post('/api/auth/2fa/reset', user.token, { token: wrongCode(user.base32) });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('invalid_code');

    const reset = await post('/api/auth/2fa/reset', user.token, { token: codeNow(user.base32) });
    expect(reset.statusCode).toBe(200);
    const { status, base32: fresh, otpauthUrl } = reset.json();
    expect(status).toBe('2fa_setup');
    expect(fresh).toMatch(/^[A-Z2-7]{32}$/);
    expect(fresh).not.toBe(user.base32);
    expect((URI.parse(otpauthUrl) as TOTP).secret.base32).toBe(fresh);
    let row = await userRow(user.id);
    expect(t.services.platform.secretBox.openText(row.totp_secret!)).toBe(user.base32);
    expect(t.services.platform.secretBox.openText(row.totp_pending_secret!)).toBe(fresh);
    expect(JSON.stringify(row)).not.toContain(fresh);
    expect((await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(user.token) })).statusCode).toBe(
      200,
    ); // still signed in
    expect((await getAuth(user.token)).json()).toMatchObject({
      status: 'ok',
      auth: { twoFactorConfigured: true, twoFactorPassed: true },
    });

    // Until confirmed, sign-in still takes the old secret, not the new one.
    nextStep();
    const limited = await limitedToken(user);
    expect((await post('/api/auth/2fa/verify', limited, { token: codeNow(fresh) })).statusCode).toBe(400);
    expect((await post('/api/auth/2fa/verify', limited, { token: codeNow(user.base32) })).statusCode).toBe(200);

    // Confirming works in the same step the old code was just used in.
    const confirmed = await post('/api/auth/2fa/enable/submit', user.token, { token: codeNow(fresh) });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json().auth).toMatchObject({ twoFactorConfigured: true, twoFactorPassed: true });
    const newCodes: string[] = confirmed.json().recoveryCodes;
    expect(newCodes).toHaveLength(10);
    expect(newCodes.some((c) => user.recoveryCodes.includes(c))).toBe(false);
    row = await userRow(user.id);
    expect(t.services.platform.secretBox.openText(row.totp_secret!)).toBe(fresh);
    expect(row.totp_pending_secret).toBeNull();
    expect(await recoveryRows(user.id)).toHaveLength(10);

    nextStep();
    const next = await limitedToken(user);
    expect((await post('/api/auth/2fa/verify', next, { token: codeNow(user.base32) })).statusCode).toBe(400);
    expect((await post('/api/auth/2fa/verify', next, { token: user.recoveryCodes[0] })).statusCode).toBe(400);
    expect((await post('/api/auth/2fa/verify', next, { token: codeNow(fresh) })).statusCode).toBe(200);
    expect(await actions(user.id)).toEqual(expect.arrayContaining(['2fa.reset:0', '2fa.reset:1']));
  });

  it('accepts a recovery code to reset', async () => {
    const user = await enabledUser();
    const res = await post('/api/auth/2fa/reset', user.token, { token: user.recoveryCodes[3] });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('2fa_setup');
    expect((await recoveryRows(user.id)).filter((r) => r.used_at !== null)).toHaveLength(1);
  });

  it('refuses enable/request once configured with 409 pointing at reset', async () => {
    const user = await enabledUser();
    const res = await post('/api/auth/2fa/enable/request', user.token);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', message: expect.stringContaining('/api/auth/2fa/reset') });
    expect((await userRow(user.id)).totp_pending_secret).toBeNull();
  });
});

describe('guards and preconditions', () => {
  it('answers 400 two_factor_not_configured to verify and reset without 2FA, and two_factor_setup_missing to an unstarted submit', async () => {
    const user = await createVerifiedUser(t);
    for (const url of ['/api/auth/2fa/verify', '/api/auth/2fa/reset']) {
      const res = await post(url, user.token, { token: '123456' });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe('two_factor_not_configured');
    }
    const submit = await post('/api/auth/2fa/enable/submit', user.token, { token: '123456' });
    expect(submit.statusCode).toBe(400);
    expect(submit.json().code).toBe('two_factor_setup_missing');
  });

  it('answers 401 without credentials and 403 to a user whose phone is not verified', async () => {
    const unverified = await registerUser(t);
    for (const url of [
      '/api/auth/2fa/enable/request',
      '/api/auth/2fa/enable/submit',
      '/api/auth/2fa/verify',
      '/api/auth/2fa/reset',
    ]) {
      const anonymous = await post(url, null, { token: '123456' });
      expect(anonymous.statusCode, url).toBe(401);
      expect(anonymous.json().code).toBe('unauthenticated');
    }
    for (const url of ['/api/auth/2fa/enable/request', '/api/auth/2fa/enable/submit', '/api/auth/2fa/reset']) {
      const res = await post(url, unverified.token, { token: '123456' });
      expect(res.statusCode, url).toBe(403);
      expect(res.json().code).toBe('phone_not_verified');
    }
  });

  it('documents the four routes in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    for (const path of [
      '/api/auth/2fa/enable/request',
      '/api/auth/2fa/enable/submit',
      '/api/auth/2fa/verify',
      '/api/auth/2fa/reset',
    ]) {
      expect(doc.paths[path]?.post?.summary, path).toEqual(expect.any(String));
      expect(doc.paths[path].post.responses['400'] ?? doc.paths[path].post.responses['409']).toBeDefined();
    }
  });
});
