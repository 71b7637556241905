// Routes anyone can call (no credentials) take small bodies: a huge body is
// refused with 413 before the JSON parser or the validator sees it.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, registerUser } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MB = 1024 * 1024;

describe('body limits of unauthenticated routes', () => {
  it('defaults to 16 KiB', () => {
    expect(t.config.unauthenticatedBodyLimitBytes).toBe(16 * 1024);
  });

  it('refuses a 15 MB login body with 413 at once, before parsing: not invalid JSON (400), not a validation error', async () => {
    // Not JSON at all: had the parser run, the answer would be 400 invalid_json.
    const garbage = `{${'x'.repeat(15 * MB)}`;
    const started = performance.now();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: garbage,
    });
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large' });
    expect(elapsed).toBeLessThan(1000);

    // Well-formed JSON with a huge field: had the validator run, it would be 400 invalid_input.
    const json = JSON.stringify({ email: 'a@example.com', password: 'p'.repeat(15 * MB), remember: false });
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: json,
      headers: { 'content-type': 'application/json' },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('payload_too_large');
  });

  it('stops reading a chunked body (no Content-Length) at the limit', async () => {
    let sent = 0;
    const stream = new Readable({
      read() {
        if (sent >= 4 * MB) return this.push(null);
        sent += 64 * 1024;
        this.push('x'.repeat(64 * 1024));
      },
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      headers: { 'content-type': 'application/json' },
      payload: stream,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it.each([
    '/api/auth/register',
    '/api/auth/login',
    '/api/auth/reset-password/request',
    '/api/auth/reset-password/submit',
  ])('%s: 17 KiB is 413, a normal body is read', async (url) => {
    const over = await t.app.inject({
      method: 'POST',
      url,
      payload: { email: 'a@example.com', padding: 'x'.repeat(17 * 1024) },
    });
    expect(over.statusCode).toBe(413);
    const normal = await t.app.inject({ method: 'POST', url, payload: { email: 'a@example.com' } });
    expect(normal.statusCode).not.toBe(413);
  });

  it('applies to signed-in /api/auth/* routes too, but not to other authenticated routes', async () => {
    const user = await registerUser(t);
    const auth = await t.app.inject({
      method: 'POST',
      url: '/api/auth/verify/submit',
      headers: bearer(user.token),
      payload: { code: '123456', padding: 'x'.repeat(17 * 1024) },
    });
    expect(auth.statusCode).toBe(413);
    // An authenticated route elsewhere keeps the general limit: 100 KiB reaches validation (400), not 413.
    const key = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(user.token),
      payload: { name: 'x'.repeat(100 * 1024) },
    });
    expect(key.statusCode).toBe(400);
    expect(key.json().code).toBe('invalid_input');
  });
});
