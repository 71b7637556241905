// Signing out (issue 46): POST /api/auth/logout is the form for browsers; the
// spec's GET stays, but neither signs a console user out when a browser sends
// the session cookie from another site (a link, an image, a form elsewhere):
// 403 forbidden naming POST, the session kept and the cookie not cleared.
// Bearer tokens (apps, SDKs, other origins with their own token) sign out as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { publicUrl: 'https://console.example.com' } });
});
afterAll(() => t.close());

type Method = 'GET' | 'POST';
const logout = (method: Method, headers: Record<string, string>) =>
  t.app.inject({ method, url: '/api/auth/logout', headers: { host: 'api.internal:3000', ...headers } });
const cookie = (token: string) => ({ cookie: `token=${token}` });
const signedIn = async (token: string) =>
  (await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) })).statusCode === 200;
const clearsCookie = (res: Awaited<ReturnType<typeof logout>>) =>
  res.cookies.some((c) => c.name === 'token' && c.value === '');

describe('POST /api/auth/logout', () => {
  it('answers like GET: status logout, the cookie cleared, the token revoked', async () => {
    const user = await registerUser(t);
    const res = await logout('POST', bearer(user.token));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'logout' });
    expect(clearsCookie(res)).toBe(true);
    expect(await signedIn(user.token)).toBe(false);
  });

  it('signs out a console user from the console itself (the cookie, Origin PUBLIC_URL, same-origin)', async () => {
    const user = await registerUser(t);
    const res = await logout('POST', {
      ...cookie(user.token),
      origin: 'https://console.example.com',
      'sec-fetch-site': 'same-origin',
    });
    expect(res.json()).toEqual({ status: 'logout' });
    expect(await signedIn(user.token)).toBe(false);
  });

  it('without credentials answers logout too; with a JSON body as well', async () => {
    expect((await logout('POST', {})).json()).toEqual({ status: 'logout' });
    const withBody = await t.app.inject({ method: 'POST', url: '/api/auth/logout', payload: {} });
    expect(withBody.json()).toEqual({ status: 'logout' });
  });
});

describe.each(['GET', 'POST'] as const)('%s /api/auth/logout with the session cookie from another site', (method) => {
  it.each([
    ['Sec-Fetch-Site: cross-site (a link on another site)', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
    ['an Origin of another site', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
  ])('is refused 403 forbidden, naming POST, and keeps the session and the cookie: %s', async (_name, headers) => {
    const user = await registerUser(t);
    const res = await logout(method, { ...cookie(user.token), ...headers });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden', message: expect.stringContaining('POST /api/auth/logout') });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(await signedIn(user.token)).toBe(true);
  });

  it.each([
    ['the same origin', { 'sec-fetch-site': 'same-origin' }],
    ['typed in the address bar (Sec-Fetch-Site: none)', { 'sec-fetch-site': 'none' }],
    ['no browser headers (curl)', {}],
    ['an Origin naming the host it was sent to (PUBLIC_URL not set to it)', { origin: 'http://api.internal:3000' }],
  ])('is refused from another site, and signs out from %s', async (_name, headers) => {
    const user = await registerUser(t);
    expect((await logout(method, { ...cookie(user.token), 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    const res = await logout(method, { ...cookie(user.token), ...headers });
    expect(res.json()).toEqual({ status: 'logout' });
    expect(clearsCookie(res)).toBe(true);
    expect(await signedIn(user.token)).toBe(false);
  });

  it('signs out a bearer token sent from another origin (an app with its own token; a link cannot send one), not the cookie', async () => {
    const user = await registerUser(t);
    expect(
      (
        await logout(method, {
          ...cookie(user.token),
          origin: 'https://app.example.org',
          'sec-fetch-site': 'cross-site',
        })
      ).statusCode,
    ).toBe(403);
    const res = await logout(method, {
      ...bearer(user.token),
      origin: 'https://app.example.org',
      'sec-fetch-site': 'cross-site',
    });
    expect(res.json()).toEqual({ status: 'logout' });
    expect(await signedIn(user.token)).toBe(false);
  });
});

describe('the console', () => {
  it('signs out with POST', async () => {
    const script = (await t.app.inject({ method: 'GET', url: '/console/assets/common.js' })).body;
    expect(script).toContain("api('/api/auth/logout', { method: 'POST' })");
    expect(script).not.toMatch(/api\('\/api\/auth\/logout'\)/);
  });
});
