import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const login = (email: string, password: string, remember = false) =>
  t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password, remember } });

describe('register', () => {
  it('creates a user in phone_not_verified, returns a token and sets the cookie', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: {
        firstName: 'Grace',
        lastName: 'Hopper',
        email: 'Grace@Example.com',
        phone: '+1 (415) 555-0100',
        password: 'abcdefgh',
        confirmPassword: 'abcdefgh',
      },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('phone_not_verified');
    expect(body.token.split('.')).toHaveLength(3);
    expect(body.auth).toMatchObject({
      email: 'grace@example.com',
      firstName: 'Grace',
      phoneVerified: false,
      twoFactorConfigured: false,
    });
    const cookie = res.cookies.find((c) => c.name === 'token');
    expect(cookie).toMatchObject({
      value: body.token,
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: t.config.sessionTtlSeconds,
    });
    const user = await t.services.auth.users.findByEmail('grace@example.com');
    expect(user?.phone).toBe('+14155550100');
    expect(user?.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('answers an existing email like a new one (status, fields, cookie), creates and changes nothing, and emails the owner', async () => {
    const owner = await registerUser(t);
    const before = await t.services.auth.users.findById(owner.id);
    const payload = (email: string) => ({
      firstName: 'Eve',
      lastName: 'Probe',
      email,
      phone: '+14155550101',
      password: 'abcdefgh',
      confirmPassword: 'abcdefgh',
    });
    const fresh = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: payload(`fresh-${Date.now()}@example.com`),
    });
    const taken = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: payload(owner.email.toUpperCase()),
    });

    expect(taken.statusCode).toBe(fresh.statusCode);
    expect(taken.statusCode).toBe(200);
    const [a, b] = [fresh.json(), taken.json()];
    expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
    expect(Object.keys(b.auth).sort()).toEqual(Object.keys(a.auth).sort());
    expect(b).toMatchObject({
      status: 'phone_not_verified',
      auth: { email: owner.email, firstName: 'Eve', lastName: 'Probe', phoneVerified: false },
    });
    expect(b.token.split('.')).toHaveLength(3);
    expect(b.auth.id).not.toBe(owner.id);
    const cookieOf = (res: typeof fresh) => {
      const c = res.cookies.find((x) => x.name === 'token')!;
      return { httpOnly: c.httpOnly, sameSite: c.sameSite, maxAge: c.maxAge, path: c.path };
    };
    expect(cookieOf(taken)).toEqual(cookieOf(fresh));
    expect(Object.keys(taken.headers).sort()).toEqual(Object.keys(fresh.headers).sort());

    // Nothing was created or changed; the decoy token authenticates nobody.
    expect(await t.services.auth.users.findById(owner.id)).toEqual(before);
    expect(
      await t.database.db.selectFrom('users').select('id').where('email', '=', owner.email).execute(),
    ).toHaveLength(1);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(b.token) })).statusCode).toBe(401);
    expect((await login(owner.email, owner.password)).json().status).toBe('phone_not_verified');

    // The owner hears about it.
    await t.services.auth.accountMail.drain();
    const mails = (
      await t.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(owner.email)}` })
    ).json();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({
      channel: 'email',
      to: owner.email,
      subject: 'Someone tried to sign up with your email',
    });
    expect(mails[0].body).toContain('Nothing was created');
  });

  // The design's price (docs/decisions/account-recovery.md, issue 46): the answer looks the same, the token's use does not.
  it("the token of a taken-email answer is refused where a new account's works: 401 on GET /api/auth and phone verification", async () => {
    const owner = await registerUser(t);
    const payload = (email: string) => ({
      firstName: 'Eve',
      lastName: 'Probe',
      email,
      phone: '+14155550102',
      password: 'abcdefgh',
      confirmPassword: 'abcdefgh',
    });
    const fresh = (
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: payload(`fresh-use-${Date.now()}@example.com`),
      })
    ).json();
    const decoy = (
      await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: payload(owner.email) })
    ).json();
    const use = (token: string) =>
      Promise.all([
        t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) }),
        t.app.inject({ method: 'POST', url: '/api/auth/verify/request', headers: bearer(token), payload: {} }),
      ]).then((answers) => answers.map((a) => a.statusCode));
    expect(await use(fresh.token)).toEqual([200, 200]);
    expect(await use(decoy.token)).toEqual([401, 401]);
    // Signing out answers alike (credentials are optional there).
    for (const token of [fresh.token, decoy.token])
      expect((await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: bearer(token) })).json()).toEqual({
        status: 'logout',
      });
  });

  it('hashes the password for an existing email too, and takes about as long as a real sign-up', async () => {
    const owner = await registerUser(t);
    const hash = vi.spyOn(t.services.auth.passwords, 'hash');
    const timed = async (email: string) => {
      const started = performance.now();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: { email, phone: '+14155550103', password: 'abcdefgh', confirmPassword: 'abcdefgh' },
      });
      expect(res.statusCode).toBe(200);
      return performance.now() - started;
    };
    const fresh: number[] = [];
    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      fresh.push(await timed(`timing-${i}-${Date.now()}@example.com`));
      taken.push(await timed(owner.email));
    }
    expect(hash).toHaveBeenCalledTimes(10);
    hash.mockRestore();
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[2];
    // Both are dominated by argon2id (tens of ms); a missing hash would make one path several times faster.
    expect(median(taken) / median(fresh)).toBeGreaterThan(0.5);
    expect(median(taken) / median(fresh)).toBeLessThan(2);
  });

  it('sends at most signupNoticePerEmail notices to one address, still answering 200 to every attempt', async () => {
    const owner = await registerUser(t);
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: { email: owner.email, phone: '+14155550104', password: 'abcdefgh', confirmPassword: 'abcdefgh' },
      });
      expect(res.statusCode).toBe(200);
    }
    await t.services.auth.accountMail.drain();
    const mails = (
      await t.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(owner.email)}` })
    ).json();
    expect(mails).toHaveLength(t.config.rateLimits.signupNoticePerEmail.limit);
  });

  it.each([
    [{ password: 'short', confirmPassword: 'short' }, 'invalid_input', 'at least 8'],
    [{ password: 'abcdefgh', confirmPassword: 'abcdefgX' }, 'passwords_mismatch', 'do not match'],
    [{ phone: '12345' }, 'invalid_input', 'phone'],
    [{ email: 'not-an-email' }, 'invalid_input', 'email'],
  ])('refuses %j with 400 %s', async (override, code, text) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: {
        email: 'x@example.com',
        phone: '+14155550102',
        password: 'abcdefgh',
        confirmPassword: 'abcdefgh',
        ...override,
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(code);
    expect(res.json().message).toContain(text);
  });

  it('accepts a 64-character passphrase', async () => {
    const password = 'p'.repeat(64);
    const user = await registerUser(t, { password, confirmPassword: password });
    expect((await login(user.email, password)).json().status).toBe('phone_not_verified');
  });
});

describe('login', () => {
  it('answers phone_not_verified with a cookie for an unverified user', async () => {
    const user = await registerUser(t);
    const res = await login(user.email, user.password);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('phone_not_verified');
    expect(res.cookies.find((c) => c.name === 'token')?.value).toBe(res.json().token);
  });

  it('answers ok for a verified user, and remember extends the cookie', async () => {
    const user = await createVerifiedUser(t);
    const res = await login(user.email, user.password, true);
    expect(res.json()).toMatchObject({ status: 'ok', auth: { phoneVerified: true } });
    expect(res.cookies.find((c) => c.name === 'token')?.maxAge).toBe(t.config.rememberTtlSeconds);
  });

  it('answers wrong password and unknown email alike with 400 { status: error, message }', async () => {
    const user = await registerUser(t);
    const wrong = await login(user.email, 'wrong password');
    const unknown = await login('nobody@example.com', 'wrong password');
    expect(wrong.statusCode).toBe(400);
    expect(unknown.statusCode).toBe(400);
    expect(wrong.json()).toEqual({
      status: 'error',
      message: 'email or password is incorrect',
      code: 'invalid_credentials',
    });
    expect(unknown.json()).toEqual(wrong.json());
    expect(wrong.cookies).toHaveLength(0);
  });

  it('writes every attempt to the audit log', async () => {
    const user = await registerUser(t);
    await login(user.email, 'wrong password');
    await login(user.email, user.password);
    const entries = await t.services.platform.audit.listForUser(user.id);
    const logins = entries.filter((e) => e.action === 'login').map((e) => Number(e.success));
    expect(logins).toEqual([1, 0]);
    expect(entries.find((e) => e.action === 'register')).toMatchObject({
      ip: '127.0.0.1',
      user_agent: 'lightMyRequest',
    });
  });

  it('limits attempts per email with 429 and Retry-After', async () => {
    const user = await registerUser(t);
    const { limit } = t.config.rateLimits.loginPerEmail;
    for (let i = 0; i < limit; i++) expect((await login(user.email, 'wrong password')).statusCode).toBe(400);
    const res = await login(user.email, user.password);
    expect(res.statusCode).toBe(429);
    expect(res.json().code).toBe('rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('GET /api/auth and logout', () => {
  it('answers the status and AuthInfo of the caller', async () => {
    const user = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) });
    expect(res.json()).toEqual({
      status: 'phone_not_verified',
      auth: {
        id: user.id,
        email: user.email,
        firstName: 'Ada',
        lastName: 'Lovelace',
        phoneVerified: false,
        twoFactorPassed: false,
        twoFactorConfigured: false,
      },
    });
  });

  it('accepts the token from the cookie', async () => {
    const user = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth', cookies: { token: user.token } });
    expect(res.json().auth.id).toBe(user.id);
  });

  it('answers 401 without credentials and with a bad token', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/api/auth' });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('unauthenticated');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const bad = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer('not.a.jwt') });
    expect(bad.statusCode).toBe(401);
  });

  it('refuses an expired token', async () => {
    const user = await registerUser(t);
    t.clock.advance((t.config.sessionTtlSeconds + 1) * 1000);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) });
    expect(res.statusCode).toBe(401);
  });

  it('refuses a token that expired after it was last accepted (remembered signature checks still expire)', async () => {
    const user = await registerUser(t);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) })).statusCode).toBe(200);
    t.clock.advance((t.config.sessionTtlSeconds - 1) * 1000);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) })).statusCode).toBe(200);
    t.clock.advance(2000);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) })).statusCode).toBe(401);
  });

  it('logout answers logout, clears the cookie and revokes the token', async () => {
    const user = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(user.token) });
    expect(res.json()).toEqual({ status: 'logout' });
    const cleared = res.cookies.find((c) => c.name === 'token');
    expect(cleared?.value).toBe('');
    const after = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(user.token) });
    expect(after.statusCode).toBe(401);
  });

  it('logout without credentials still answers logout', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/logout' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'logout' });
  });
});
