import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto.js';
import type { EmailMessage, EmailProvider } from '../../../src/providers/email/interface.js';
import { type TestApp, createTestApp, relaxedIpLimits } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

const MINUTE = 60_000;
const APP_ORIGIN = 'https://app.example.com';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { RETURN_URL_ORIGINS: `http://127.0.0.1:3000,${APP_ORIGIN}` } });
});
afterAll(() => t.close());

const requestReset = (payload: Record<string, unknown>, app: TestApp = t) =>
  app.app.inject({ method: 'POST', url: '/api/auth/reset-password/request', payload });
const submitReset = (
  token: string,
  password = 'a brand new passphrase',
  confirmPassword = password,
  app: TestApp = t,
) =>
  app.app.inject({
    method: 'POST',
    url: '/api/auth/reset-password/submit',
    payload: { token, password, confirmPassword },
  });
const login = (email: string, password: string) =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password, remember: false } });
const getAuth = (token: string) => t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) });
const resetRows = (userId: string) =>
  t.database.db.selectFrom('password_resets').selectAll().where('user_id', '=', userId).execute();
const actions = async (id: string) =>
  (await t.services.platform.audit.listForUser(id)).map((e) => `${e.action}:${Number(e.success)}`);

/** Emails the sandbox sent to `email`, newest first, once background sends have finished. */
async function emailsTo(email: string) {
  await t.services.auth.passwordReset.drain();
  const res = await t.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(email)}` });
  return res.json() as Array<{
    channel: string;
    to: string;
    subject: string;
    body: string;
    data: { token: string; url: string };
  }>;
}

/** Requests a reset for the user and returns the emailed token. */
async function resetToken(user: TestUser): Promise<string> {
  const res = await requestReset({ email: user.email });
  expect(res.statusCode).toBe(200);
  const [mail] = await emailsTo(user.email);
  return mail.data.token;
}

const REQUESTED = {
  status: 'requested',
  message: 'if an account with this email exists, a reset link has been sent to it',
};

describe('POST /api/auth/reset-password/request', () => {
  it('emails a link holding a single-use token; only its SHA-256 is stored', async () => {
    const user = await registerUser(t);
    const res = await requestReset({ email: user.email.toUpperCase() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(REQUESTED);

    const mails = await emailsTo(user.email);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail).toMatchObject({ channel: 'email', to: user.email, subject: 'Reset your Workspace password' });
    expect(mail.data.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 bytes, base64url
    expect(mail.data.url).toBe(`http://127.0.0.1:3000/reset-password?token=${mail.data.token}`);
    expect(mail.body).toContain(mail.data.url);
    expect(mail.body).toContain('30 minutes');

    const rows = await resetRows(user.id);
    expect(rows).toEqual([
      {
        token_hash: sha256Hex(mail.data.token),
        user_id: user.id,
        expires_at: t.clock.now() + 30 * MINUTE,
        used_at: null,
        created_at: t.clock.now(),
      },
    ]);
    expect(await actions(user.id)).toContain('password.reset_request:1');
  });

  it('answers an unknown email exactly like a known one, and sends nothing', async () => {
    const known = await registerUser(t);
    const a = await requestReset({ email: known.email });
    const b = await requestReset({ email: 'nobody-here@example.com' });
    expect(b.statusCode).toBe(a.statusCode);
    expect(b.json()).toEqual(a.json());
    expect(Object.keys(b.headers).sort()).toEqual(Object.keys(a.headers).sort());
    expect(await emailsTo('nobody-here@example.com')).toEqual([]);
  });

  it('uses an allowed returnUrl as the link, keeping its query', async () => {
    const user = await registerUser(t);
    const res = await requestReset({ email: user.email, returnUrl: `${APP_ORIGIN}/account/reset?lang=en` });
    expect(res.statusCode).toBe(200);
    const [mail] = await emailsTo(user.email);
    expect(mail.data.url).toBe(`${APP_ORIGIN}/account/reset?lang=en&token=${mail.data.token}`);
    expect(mail.body).toContain(mail.data.url);
  });

  it.each([
    'https://evil.example.com/reset',
    'https://app.example.com.evil.com/reset',
    'https://user:pw@app.example.com/reset',
    'javascript:alert(1)',
    '/reset-password',
    'not a url',
  ])('refuses returnUrl %s with 400 invalid_return_url, for known and unknown emails alike', async (returnUrl) => {
    const user = await registerUser(t);
    const known = await requestReset({ email: user.email, returnUrl });
    const unknown = await requestReset({ email: 'nobody-else@example.com', returnUrl });
    expect(known.statusCode).toBe(400);
    expect(known.json().code).toBe('invalid_return_url');
    expect(unknown.json()).toEqual(known.json());
    expect(await emailsTo(user.email)).toEqual([]);
  });

  it('refuses a malformed email with 400', async () => {
    const res = await requestReset({ email: 'not-an-email' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_input');
  });

  it('limits requests per email with 429, for unknown emails too', async () => {
    const user = await registerUser(t);
    const { limit } = t.config.rateLimits.resetRequestPerEmail;
    for (const email of [user.email, 'ghost@example.com']) {
      for (let i = 0; i < limit; i++) expect((await requestReset({ email })).statusCode).toBe(200);
      const res = await requestReset({ email });
      expect(res.statusCode).toBe(429);
      expect(res.json().code).toBe('rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await emailsTo(user.email)).toHaveLength(limit);
  });

  it('answers without waiting for the email to be sent', async () => {
    let release: () => void = () => {};
    const sent: EmailMessage[] = [];
    const slow: EmailProvider = {
      name: 'slow',
      sandbox: false,
      send: (message) =>
        new Promise((resolve) => {
          release = () => {
            sent.push(message);
            resolve({ id: 'x' });
          };
        }),
    };
    const other = await createTestApp({ providers: { email: slow } });
    try {
      const user = await registerUser(other);
      const res = await requestReset({ email: user.email }, other);
      expect(res.json()).toEqual(REQUESTED);
      expect(sent).toHaveLength(0);
      release();
      await other.services.auth.passwordReset.drain();
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatchObject({ to: user.email, data: { token: expect.any(String) } });
    } finally {
      release();
      await other.close();
    }
  });
});

describe('POST /api/auth/reset-password/submit', () => {
  it('sets the new password, ends every other session and signs in with a cookie', async () => {
    const user = await createVerifiedUser(t);
    const other = await login(user.email, user.password);
    const token = await resetToken(user);

    const res = await submitReset(token, 'a brand new passphrase');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', auth: { id: user.id, phoneVerified: true } });
    expect(res.cookies.find((c) => c.name === 'token')).toMatchObject({
      value: body.token,
      httpOnly: true,
      maxAge: t.config.sessionTtlSeconds,
    });

    // Every session from before the reset is over; the new one works.
    expect((await getAuth(user.token)).statusCode).toBe(401);
    expect((await getAuth(other.json().token)).statusCode).toBe(401);
    expect((await getAuth(body.token)).json()).toMatchObject({ status: 'ok', auth: { id: user.id } });

    expect((await login(user.email, user.password)).statusCode).toBe(400);
    expect((await login(user.email, 'a brand new passphrase')).json().status).toBe('ok');
    const row = await t.database.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.token_version).toBe(1);
    expect(await actions(user.id)).toContain('password.reset:1');
  });

  it('deletes every API key of the account: an old key answers 401 afterwards, old session too; the email says so', async () => {
    const user = await createVerifiedUser(t);
    const created = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(user.token),
      payload: { name: 'ci' },
    });
    expect(created.statusCode).toBe(200);
    const key = created.json().key as string;
    // The key works (and its lookup is now cached) before the reset.
    expect((await getAuth(key)).statusCode).toBe(200);

    const token = await resetToken(user);
    const [mail] = await emailsTo(user.email);
    expect(mail.body).toContain('deletes all of its API keys');
    const res = await submitReset(token, 'another new passphrase');
    expect(res.statusCode).toBe(200);

    expect((await getAuth(key)).statusCode).toBe(401);
    expect((await getAuth(user.token)).statusCode).toBe(401);
    const fresh = res.json().token as string;
    expect((await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(fresh) })).json()).toEqual([]);
    expect(await t.database.db.selectFrom('api_keys').select('id').where('user_id', '=', user.id).execute()).toEqual(
      [],
    );
  });

  it('signs an unverified user in as phone_not_verified', async () => {
    const user = await registerUser(t);
    const res = await submitReset(await resetToken(user));
    expect(res.json()).toMatchObject({ status: 'phone_not_verified', auth: { phoneVerified: false } });
    expect(res.cookies.find((c) => c.name === 'token')?.value).toBe(res.json().token);
  });

  it('does not bypass 2FA: a user with 2FA gets 2fa_required, a limited token and no cookie', async () => {
    const user = await createVerifiedUser(t);
    await t.services.auth.users.update(user.id, { two_factor_enabled: 1 });
    const res = await submitReset(await resetToken(user));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: '2fa_required',
      auth: { twoFactorConfigured: true, twoFactorPassed: false },
    });
    expect(res.cookies.find((c) => c.name === 'token')).toBeUndefined();
    const limited = res.json().token;
    expect((await getAuth(limited)).json().status).toBe('2fa_required');
    const guarded = await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(limited) });
    expect(guarded.statusCode).toBe(403);
    expect(guarded.json().code).toBe('two_factor_required');
  });

  it("accepts a token once only, and using one ends the user's other reset tokens", async () => {
    const user = await registerUser(t);
    const first = await resetToken(user);
    const second = await resetToken(user);
    expect(first).not.toBe(second);
    expect(await resetRows(user.id)).toHaveLength(2);

    expect((await submitReset(second)).statusCode).toBe(200);
    const again = await submitReset(second, 'yet another passphrase');
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_token');
    const older = await submitReset(first, 'yet another passphrase');
    expect(older.json().code).toBe('invalid_token');
    expect(await resetRows(user.id)).toEqual([
      expect.objectContaining({ token_hash: sha256Hex(second), used_at: t.clock.now() }),
    ]);
    expect((await login(user.email, 'a brand new passphrase')).json().status).toBe('phone_not_verified');
  });

  it('expires a token after 30 minutes', async () => {
    const user = await registerUser(t);
    const token = await resetToken(user);
    t.clock.advance(30 * MINUTE);
    const res = await submitReset(token);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_token');
    expect((await login(user.email, user.password)).statusCode).toBe(200);
  });

  it('still accepts a token just before it expires', async () => {
    const user = await registerUser(t);
    const token = await resetToken(user);
    t.clock.advance(30 * MINUTE - 1000);
    expect((await submitReset(token)).statusCode).toBe(200);
  });

  it('refuses an unknown token with 400 invalid_token', async () => {
    const res = await submitReset('A'.repeat(43));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      code: 'invalid_token',
      message: expect.stringContaining('invalid, expired or already used'),
    });
  });

  it('checks the new password first and leaves the token usable when it is refused', async () => {
    const user = await registerUser(t);
    const token = await resetToken(user);
    const short = await submitReset(token, 'short');
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('at least 8') });
    const mismatch = await submitReset(token, 'a brand new passphrase', 'a different passphrase');
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('passwords_mismatch');
    expect((await submitReset(token)).statusCode).toBe(200);
  });

  it('refuses a body without confirmPassword with 400 invalid_input', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/reset-password/submit',
      payload: { token: 'x', password: 'abcdefgh' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_input');
  });
});

describe('per-IP limits', () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await createTestApp({
      config: {
        rateLimits: {
          ...relaxedIpLimits,
          resetRequestPerIp: { limit: 2, windowMs: 60 * MINUTE },
          resetSubmitPerIp: { limit: 2, windowMs: 60 * MINUTE },
        },
      },
    });
  });
  afterAll(() => small.close());

  it('limits reset requests per IP (resetRequestPerIp)', async () => {
    const send = (email: string, ip: string) =>
      small.app.inject({
        method: 'POST',
        url: '/api/auth/reset-password/request',
        payload: { email },
        remoteAddress: ip,
      });
    expect((await send('a@example.com', '198.51.100.1')).statusCode).toBe(200);
    expect((await send('b@example.com', '198.51.100.1')).statusCode).toBe(200);
    const res = await send('c@example.com', '198.51.100.1');
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
    expect((await send('c@example.com', '198.51.100.2')).statusCode).toBe(200);
  });

  it('limits reset submissions per IP (resetSubmitPerIp)', async () => {
    const send = (token: string, ip: string) =>
      small.app.inject({
        method: 'POST',
        url: '/api/auth/reset-password/submit',
        payload: { token, password: 'abcdefgh', confirmPassword: 'abcdefgh' },
        remoteAddress: ip,
      });
    expect((await send('guess-1', '198.51.100.9')).json().code).toBe('invalid_token');
    expect((await send('guess-2', '198.51.100.9')).json().code).toBe('invalid_token');
    const res = await send('guess-3', '198.51.100.9');
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('rate_limited');
  });
});
