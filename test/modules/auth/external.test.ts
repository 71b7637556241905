// External sign-in end to end: the app (driven with inject()) against a real
// oidc-provider on 127.0.0.1, whose login and consent pages a scripted browser walks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, registerUser } from '../../support/factories.js';
import { type OidcTestServer, signInAtProvider, startOidcServer } from '../../support/oidc-server.js';

// The app never listens: the provider only needs the redirect URL to be registered, and the
// scripted browser stops there and hands the callback's query to the app with inject().
const PUBLIC_URL = 'http://127.0.0.1:4810';
const APP_ORIGIN = 'http://app.example.test';
const redirectUri = (slug: string) => `${PUBLIC_URL}/api/auth/external/${slug}/redirect`;

let t: TestApp;
let acme: OidcTestServer;
let thin: OidcTestServer;

beforeAll(async () => {
  acme = await startOidcServer({ redirectUri: redirectUri('acme') });
  thin = await startOidcServer({ redirectUri: redirectUri('thin'), claimsInIdToken: false });
  t = await createTestApp({
    env: {
      PUBLIC_URL,
      RETURN_URL_ORIGINS: APP_ORIGIN,
      OIDC_PROVIDERS: 'acme,thin,down',
      OIDC_ACME_NAME: 'Acme ID',
      OIDC_ACME_ISSUER: acme.issuer,
      OIDC_ACME_CLIENT_ID: acme.clientId,
      OIDC_ACME_CLIENT_SECRET: acme.clientSecret,
      OIDC_THIN_ISSUER: thin.issuer,
      OIDC_THIN_CLIENT_ID: thin.clientId,
      OIDC_THIN_CLIENT_SECRET: thin.clientSecret,
      // Nothing listens on port 1: discovery fails with connection refused.
      OIDC_DOWN_ISSUER: 'http://127.0.0.1:1',
      OIDC_DOWN_CLIENT_ID: 'x',
      OIDC_DOWN_CLIENT_SECRET: 'y',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await acme?.close();
  await thin?.close();
});

let counter = 0;
/** A fresh account id at the provider (ids are typed into its login form and become `sub`). */
const newLogin = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

/**
 * The cookies of the one browser these tests play: /init sets the flow's state cookie, the
 * callback sends it back (as a browser would to the cookie's path) and clears it.
 */
const browser = new Map<string, string>();
function keepCookies(res: { cookies: Array<{ name: string; value: string; maxAge?: number; expires?: Date }> }) {
  for (const c of res.cookies) {
    if (c.maxAge === 0 || (c.expires && c.expires.getTime() <= Date.now()) || c.value === '') browser.delete(c.name);
    else browser.set(c.name, c.value);
  }
}
const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

async function init(slug: string, options: { returnTo?: string; token?: string } = {}) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/auth/external/${slug}/init`,
    query: options.returnTo === undefined ? {} : { returnTo: options.returnTo },
    headers: options.token ? bearer(options.token) : {},
  });
  keepCookies(res);
  return res;
}

/** The callback as the browser opens it; `jar` replaces this browser's cookies (another browser). */
async function callback(slug: string, search: string, jar: Map<string, string> = browser) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/auth/external/${slug}/redirect${search}`,
    headers: jar.size ? { cookie: cookieHeader(jar) } : {},
  });
  if (jar === browser) keepCookies(res);
  return res;
}

/** init → provider login and consent → the callback URL the provider sends the browser to. */
async function authorize(
  slug: string,
  login: string,
  options: { returnTo?: string; token?: string; deny?: boolean } = {},
): Promise<URL> {
  const started = await init(slug, options);
  expect(started.statusCode, started.body).toBe(200);
  return signInAtProvider(started.json().url, { login, redirectUri: redirectUri(slug), deny: options.deny });
}

/** The whole flow without returnTo: the callback answers the session JSON. */
async function signIn(slug: string, login: string, options: { token?: string } = {}) {
  const cb = await authorize(slug, login, options);
  return callback(slug, cb.search);
}

const identitiesOf = (userId: string) =>
  t.database.db.selectFrom('external_identities').selectAll().where('user_id', '=', userId).execute();

const auditActions = async (userId: string) =>
  (
    await t.database.db.selectFrom('audit_log').select(['action', 'success']).where('user_id', '=', userId).execute()
  ).map((r) => `${r.action}:${Number(r.success)}`);

describe('provider listing and metadata', () => {
  it('lists the configured providers as { slug, name }', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/external/providers' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { slug: 'acme', name: 'Acme ID' },
      { slug: 'thin', name: 'thin' },
      { slug: 'down', name: 'down' },
    ]);
  });

  it('answers metadata of a provider and 404 provider_not_found for an unknown one', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/external/acme' });
    expect(res.json()).toEqual({ slug: 'acme', name: 'Acme ID', issuer: acme.issuer });
    for (const url of [
      '/api/auth/external/nope',
      '/api/auth/external/nope/init',
      '/api/auth/external/nope/redirect?state=x&code=y',
    ]) {
      const missing = await t.app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.json().code).toBe('provider_not_found');
    }
  });
});

describe('init', () => {
  it('answers the authorization URL of a code flow with S256 PKCE, state and nonce, and stores the flow for 10 minutes', async () => {
    const res = await init('acme');
    expect(res.statusCode).toBe(200);
    const url = new URL(res.json().url);
    expect(url.origin).toBe(acme.issuer);
    const q = url.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(acme.clientId);
    expect(q.get('redirect_uri')).toBe(redirectUri('acme'));
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('nonce')).toBeTruthy();
    const row = await t.database.db
      .selectFrom('oauth_states')
      .selectAll()
      .where('state', '=', q.get('state')!)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ provider: 'acme', nonce: q.get('nonce'), return_to: null, attach_user_id: null });
    expect(Number(row.expires_at)).toBe(t.clock.now() + 10 * 60_000);
  });

  it.each([
    ['another origin', 'https://evil.example/steal'],
    ['a relative URL', '/done'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['credentials in the URL', `http://user:pw@app.example.test/done`],
  ])('refuses returnTo with %s: 400 invalid_return_url', async (_what, returnTo) => {
    const res = await init('acme', { returnTo });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_return_url');
  });

  it('answers 502 provider_error when the provider cannot be reached', async () => {
    const res = await init('down');
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('provider_error');
  });

  it('refuses to attach for a caller whose 2FA is pending (403)', async () => {
    const user = await registerUser(t);
    await t.services.auth.users.update(user.id, { phone_verified: 1, two_factor_enabled: 1 });
    const pending = await t.services.auth.auth.startSession((await t.services.auth.users.findById(user.id))!);
    expect(pending.status).toBe('2fa_required');
    const res = await init('acme', { token: pending.token });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('two_factor_required');
  });
});

describe('sign-up and sign-in', () => {
  it('creates a user without password or phone (phone_not_verified), sets the cookie, and used PKCE at the token endpoint', async () => {
    const login = newLogin('grace');
    acme.accounts.set(login, {
      email: `${login}@Example.test`,
      email_verified: true,
      given_name: 'Grace',
      family_name: 'Hopper',
    });
    const res = await signIn('acme', login);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'phone_not_verified',
      auth: {
        email: `${login}@example.test`,
        firstName: 'Grace',
        lastName: 'Hopper',
        phoneVerified: false,
        twoFactorConfigured: false,
      },
    });
    expect(res.cookies.find((c) => c.name === 'token')).toMatchObject({ value: body.token, httpOnly: true });
    expect(res.headers['cache-control']).toBe('no-store');

    const user = await t.services.auth.users.findById(body.auth.id);
    expect(user).toMatchObject({ password_hash: null, phone: null, phone_verified: 0 });
    expect(await identitiesOf(body.auth.id)).toMatchObject([
      { provider: 'acme', subject: login, email: `${login}@example.test` },
    ]);
    expect(await auditActions(body.auth.id)).toContain('external.login:1');
    expect(acme.tokenRequests.at(-1)).toEqual({ grantType: 'authorization_code', codeVerifier: true });

    const status = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(body.token) });
    expect(status.json()).toMatchObject({ status: 'phone_not_verified', auth: { id: body.auth.id } });
  });

  it('signs the same identity in again as the same user', async () => {
    const login = newLogin('repeat');
    const first = await signIn('acme', login);
    const second = await signIn('acme', login);
    expect(second.statusCode).toBe(200);
    expect(second.json().auth.id).toBe(first.json().auth.id);
    expect(second.json().token).not.toBe(first.json().token);
    const users = await t.database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', `${login}@example.test`)
      .execute();
    expect(users).toHaveLength(1);
  });

  it('reads the profile from userinfo when the ID token carries only sub', async () => {
    const login = newLogin('thin');
    thin.accounts.set(login, {
      email: `${login}@thin.test`,
      email_verified: true,
      given_name: 'Ada',
      family_name: 'Byron',
    });
    const res = await signIn('thin', login);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().auth).toMatchObject({ email: `${login}@thin.test`, firstName: 'Ada', lastName: 'Byron' });
  });

  it('refuses to create an account when the provider shares no email (400 provider_refused)', async () => {
    const login = newLogin('noemail');
    acme.accounts.set(login, { given_name: 'Nobody' });
    const res = await signIn('acme', login);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('provider_refused');
    expect(
      await t.database.db.selectFrom('external_identities').select('id').where('subject', '=', login).execute(),
    ).toHaveLength(0);
  });

  it('still asks a user with 2FA for the code: 2fa_required and no cookie', async () => {
    const login = newLogin('tfa');
    const first = await signIn('acme', login);
    await t.services.auth.users.update(first.json().auth.id, { phone_verified: 1, two_factor_enabled: 1 });
    const res = await signIn('acme', login);
    expect(res.json()).toMatchObject({
      status: '2fa_required',
      auth: { id: first.json().auth.id, twoFactorPassed: false },
    });
    expect(res.cookies.find((c) => c.name === 'token')).toBeUndefined();
  });
});

describe('existing accounts and attach', () => {
  it('attaches the provider to the signed-in user who started the flow, who can then sign in with it', async () => {
    const user = await registerUser(t);
    const login = newLogin('attach');
    acme.accounts.set(login, {
      email: `${login}@work.test`,
      email_verified: true,
      given_name: 'Other',
      family_name: 'Name',
    });
    const res = await signIn('acme', login, { token: user.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().auth).toMatchObject({ id: user.id, email: user.email, firstName: 'Ada' });
    expect(await identitiesOf(user.id)).toMatchObject([{ provider: 'acme', subject: login }]);
    expect(await auditActions(user.id)).toEqual(expect.arrayContaining(['external.link:1', 'external.login:1']));

    const again = await signIn('acme', login);
    expect(again.json().auth.id).toBe(user.id);
  });

  it('refuses to attach an identity linked to another user (409 identity_conflict)', async () => {
    const login = newLogin('taken');
    const owner = (await signIn('acme', login)).json().auth.id;
    const other = await registerUser(t);
    const res = await signIn('acme', login, { token: other.token });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('identity_conflict');
    expect(await identitiesOf(other.id)).toHaveLength(0);
    expect(await identitiesOf(owner)).toHaveLength(1);
    expect(await auditActions(other.id)).toContain('external.link:0');
  });

  it('refuses an email the provider has not verified (400 email_not_verified), before looking at accounts, and creates nothing', async () => {
    const user = await registerUser(t);
    for (const claims of [
      { email: user.email, email_verified: false, given_name: 'Mallory' },
      { email: user.email, given_name: 'Mallory' }, // email_verified absent
    ]) {
      const login = newLogin('unverified');
      acme.accounts.set(login, claims);
      const res = await signIn('acme', login);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe('email_not_verified');
      expect(await identitiesOf(user.id)).toHaveLength(0);
    }
  });

  it('never creates an account for an email the provider has not verified (false or absent)', async () => {
    for (const verified of [false, undefined]) {
      const login = newLogin('newunverified');
      acme.accounts.set(login, {
        email: `${login}@example.test`,
        ...(verified === undefined ? {} : { email_verified: verified }),
        given_name: 'Eve',
      });
      const res = await signIn('acme', login);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe('email_not_verified');
      expect(
        await t.database.db.selectFrom('users').select('id').where('email', '=', `${login}@example.test`).execute(),
      ).toHaveLength(0);
      expect(
        await t.database.db.selectFrom('external_identities').select('id').where('subject', '=', login).execute(),
      ).toHaveLength(0);
    }
  });

  it('never links a verified email to an existing password account (409 account_exists); after signing in with the password, attach works', async () => {
    const user = await registerUser(t);
    const login = newLogin('verified');
    acme.accounts.set(login, { email: user.email.toUpperCase(), email_verified: true });
    const res = await signIn('acme', login);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('account_exists');
    expect(res.json().message).toContain('password');
    expect(res.json().token).toBeUndefined();
    expect(res.cookies.find((c) => c.name === 'token')).toBeUndefined();
    expect(await identitiesOf(user.id)).toHaveLength(0);
    expect(await auditActions(user.id)).toContain('external.link:0');

    // With returnTo the browser goes back with error=account_exists, so the client can offer "sign in, then link".
    const cb = await authorize('acme', login, { returnTo: `${APP_ORIGIN}/done` });
    const redirected = await callback('acme', cb.search);
    const token = new URL(redirected.headers.location as string).searchParams.get('externalToken')!;
    const completed = await t.app.inject({ method: 'GET', url: `/api/auth/external/register/${token}` });
    expect(completed.statusCode).toBe(409);
    expect(completed.json().code).toBe('account_exists');

    // The owner signs in with the password and attaches the provider from that session.
    const session = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email, password: user.password, remember: false },
    });
    const attached = await signIn('acme', login, { token: session.json().token });
    expect(attached.statusCode, attached.body).toBe(200);
    expect(attached.json().auth.id).toBe(user.id);
    expect((await signIn('acme', login)).json().auth.id).toBe(user.id);
  });

  it('never links to an account created through another provider either (no silent takeover by email)', async () => {
    const first = newLogin('first');
    acme.accounts.set(first, { email: `${first}@shared.test`, email_verified: true });
    const owner = (await signIn('acme', first)).json().auth.id as string;
    const second = newLogin('second');
    thin.accounts.set(second, { email: `${first}@shared.test`, email_verified: true });
    const res = await signIn('thin', second);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('account_exists');
    expect(await identitiesOf(owner)).toHaveLength(1);
  });
});

describe('returnTo and the registration token', () => {
  it('redirects to returnTo with externalToken; register/{token} completes once', async () => {
    const login = newLogin('return');
    const cb = await authorize('acme', login, { returnTo: `${APP_ORIGIN}/signed-in?tab=2` });
    const res = await callback('acme', cb.search);
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.origin + location.pathname).toBe(`${APP_ORIGIN}/signed-in`);
    expect(location.searchParams.get('tab')).toBe('2');
    const token = location.searchParams.get('externalToken')!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Only a hash is stored.
    expect(
      await t.database.db.selectFrom('external_pending').select('token_hash').where('token_hash', '=', token).execute(),
    ).toHaveLength(0);

    const done = await t.app.inject({ method: 'GET', url: `/api/auth/external/register/${token}` });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'phone_not_verified', auth: { email: `${login}@example.test` } });
    expect(done.cookies.find((c) => c.name === 'token')?.value).toBe(done.json().token);

    const reused = await t.app.inject({ method: 'GET', url: `/api/auth/external/register/${token}` });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().code).toBe('invalid_token');
  });

  it('refuses a registration token after 10 minutes and an unknown one', async () => {
    const cb = await authorize('acme', newLogin('late'), { returnTo: `${APP_ORIGIN}/done` });
    const token = new URL((await callback('acme', cb.search)).headers.location as string).searchParams.get(
      'externalToken',
    )!;
    t.clock.advance(10 * 60_000 + 1);
    const late = await t.app.inject({ method: 'GET', url: `/api/auth/external/register/${token}` });
    expect(late.statusCode).toBe(400);
    expect(late.json().code).toBe('invalid_token');
    const unknown = await t.app.inject({ method: 'GET', url: '/api/auth/external/register/not-a-token' });
    expect(unknown.json().code).toBe('invalid_token');
  });

  it('sends a provider error back to returnTo as error=, and answers 400 provider_refused without returnTo', async () => {
    const denied = await authorize('acme', newLogin('deny'), { returnTo: `${APP_ORIGIN}/done`, deny: true });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    const res = await callback('acme', denied.search);
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.has('externalToken')).toBe(false);

    const plain = await authorize('acme', newLogin('deny'), { deny: true });
    const direct = await callback('acme', plain.search);
    expect(direct.statusCode).toBe(400);
    expect(direct.json().code).toBe('provider_refused');
  });
});

describe('state', () => {
  it('is bound to the browser that started the flow: /init sets an HttpOnly state cookie for the callback only', async () => {
    const started = await init('acme');
    const state = new URL(started.json().url).searchParams.get('state')!;
    const cookie = started.cookies.find((c) => c.name === 'external_state_acme');
    expect(cookie).toMatchObject({
      value: state,
      httpOnly: true,
      sameSite: 'Lax',
      path: '/api/auth/external/acme/redirect',
      maxAge: 600,
    });
  });

  it('with redirect=true, /init sends the browser to the provider itself (302) and sets the same cookie', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/external/acme/init?redirect=true' });
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(location.origin).toBe(acme.issuer);
    expect(res.cookies.find((c) => c.name === 'external_state_acme')?.value).toBe(location.searchParams.get('state'));
  });

  it('refuses a callback opened in another browser (no state cookie, or another flow’s), and leaves the flow usable by its own browser', async () => {
    const cb = await authorize('acme', newLogin('elsewhere'));
    const state = cb.searchParams.get('state')!;
    const stranger = await callback('acme', cb.search, new Map());
    expect(stranger.statusCode).toBe(400);
    expect(stranger.json().code).toBe('invalid_token');
    expect(stranger.json().message).toContain('browser');
    expect(stranger.json().token).toBeUndefined();
    const wrongCookie = await callback('acme', cb.search, new Map([['external_state_acme', 'another-flows-state']]));
    expect(wrongCookie.statusCode).toBe(400);
    expect(
      await t.database.db.selectFrom('oauth_states').select('state').where('state', '=', state).execute(),
    ).toHaveLength(1);

    // The browser that started it completes it, and its state cookie is cleared.
    const own = await callback('acme', cb.search);
    expect(own.statusCode, own.body).toBe(200);
    expect(own.cookies.find((c) => c.name === 'external_state_acme')?.value).toBe('');
  });

  it('refuses a callback without the cookie even with returnTo: no redirect carrying a token', async () => {
    const cb = await authorize('acme', newLogin('csrf'), { returnTo: `${APP_ORIGIN}/done` });
    const res = await callback('acme', cb.search, new Map());
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
  });

  it('is single use: replaying a callback is 400 invalid_token', async () => {
    const cb = await authorize('acme', newLogin('replay'));
    expect((await callback('acme', cb.search)).statusCode).toBe(200);
    // Even with the state cookie still in hand.
    const replay = await callback('acme', cb.search, new Map([['external_state_acme', cb.searchParams.get('state')!]]));
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('invalid_token');
  });

  it('refuses an unknown or missing state, and a flow older than 10 minutes', async () => {
    for (const search of ['?state=unknown&code=abc', '?code=abc', '']) {
      const res = await callback('acme', search);
      expect(res.statusCode, search).toBe(400);
      expect(res.json().code).toBe('invalid_token');
    }
    const cb = await authorize('acme', newLogin('slow'));
    t.clock.advance(10 * 60_000 + 1);
    const late = await callback('acme', cb.search);
    expect(late.statusCode).toBe(400);
    expect(late.json().code).toBe('invalid_token');
  });

  it('refuses a state used at another provider’s redirect URL', async () => {
    const cb = await authorize('acme', newLogin('cross'));
    const res = await callback('thin', cb.search);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_token');
  });

  it('refuses a code presented with another flow’s state: PKCE binds the code to its flow (400 invalid_token)', async () => {
    const first = await authorize('acme', newLogin('swap'));
    const other = new URL((await init('acme')).json().url).searchParams.get('state')!;
    const swapped = new URLSearchParams(first.search);
    swapped.set('state', other);
    const res = await callback('acme', `?${swapped}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_token' });
    expect(res.json().message).toContain('invalid_grant');
  });
});
