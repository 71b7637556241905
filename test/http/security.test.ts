// CORS for listed origins, security headers on every answer (docs included)
// and the X-Request-Id a caller sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, corsOriginMatcher } from '../../src/http/security.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, createVerifiedUser } from '../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { CORS_ORIGINS: 'https://app.example.com,http://localhost:*' } });
});
afterAll(() => t.close());

const preflight = (url: string, origin: string, method = 'POST') =>
  t.app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type',
    },
  });

describe('CORS', () => {
  it('answers the preflight of a listed origin on any route, with credentials', async () => {
    for (const [url, method] of [
      ['/api/auth/login', 'POST'],
      ['/api/objects', 'PUT'],
      ['/api/api-keys/abc', 'DELETE'],
      ['/api/events/object_created', 'GET'],
    ] as const) {
      const res = await preflight(url, 'https://app.example.com', method);
      expect(res.statusCode, url).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(String(res.headers['access-control-allow-methods'])).toContain(method);
      expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
      expect(res.headers.vary).toMatch(/origin/i);
    }
  });

  it('lets a listed origin read answers and their request id', async () => {
    const user = await createVerifiedUser(t);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/auth',
      headers: { ...bearer(user.token), origin: 'http://localhost:5173' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    const exposed = String(res.headers['access-control-expose-headers'])
      .split(',')
      .map((name) => name.trim());
    for (const name of ['x-request-id', 'x-session-id', 'idempotent-replayed', 'x-objects-written', 'etag'])
      expect(exposed).toContain(name);
  });

  it('exposes to listed origins every response header the OpenAPI document declares (ETag, Retry-After, paging, counts)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const declared = new Set<string>();
    for (const item of Object.values<
      Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>
    >(doc.paths)) {
      for (const op of Object.values(item))
        for (const response of Object.values(op.responses))
          for (const name of Object.keys(response.headers ?? {})) declared.add(name.toLowerCase());
    }
    expect([...declared]).toEqual(
      expect.arrayContaining([
        'etag',
        'retry-after',
        'idempotent-replayed',
        'x-session-id',
        'x-objects-written',
        'x-next-after',
      ]),
    );
    const res = await t.app.inject({ method: 'GET', url: '/api/health', headers: { origin: 'http://localhost:5173' } });
    const exposed = String(res.headers['access-control-expose-headers'])
      .split(',')
      .map((name) => name.trim().toLowerCase());
    expect([...declared].filter((name) => !exposed.includes(name))).toEqual([]);
  });

  it('gives an origin that is not listed no CORS headers, so browsers refuse it, and a preflight 403 naming CORS_ORIGINS', async () => {
    for (const origin of [
      'https://evil.example.com',
      'https://app.example.com.evil.com',
      'http://localhost.evil.com:3000',
      'null',
    ]) {
      const pre = await preflight('/api/auth/login', origin);
      expect(pre.statusCode, origin).toBe(403);
      expect(pre.json(), origin).toEqual({
        code: 'forbidden',
        message:
          'this origin may not call the API from a browser: the server lists the origins it accepts in CORS_ORIGINS',
      });
      expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined();
      expect(pre.headers['access-control-allow-credentials'], origin).toBeUndefined();
      const res = await t.app.inject({ method: 'GET', url: '/api/health', headers: { origin } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
    }
  });

  it('answers an OPTIONS that is not a preflight 404 as before', async () => {
    const res = await t.app.inject({ method: 'OPTIONS', url: '/api/auth/login' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('route_not_found');
  });

  it('matches exact origins and any port of a `:*` entry, nothing looser', () => {
    const allow = corsOriginMatcher(['https://app.example.com', 'http://localhost:*', 'http://[::1]:*']);
    expect(allow('https://app.example.com')).toBe(true);
    expect(allow('https://app.example.com:8443')).toBe(false);
    expect(allow('http://app.example.com')).toBe(false);
    expect(allow('http://localhost:3000')).toBe(true);
    expect(allow('http://localhost')).toBe(true);
    expect(allow('https://localhost:3000')).toBe(false);
    expect(allow('http://[::1]:8080')).toBe(true);
    expect(allow('http://localhost:3000/path')).toBe(false);
    expect(allow('not a url')).toBe(false);
  });

  it('allows no origin by default in production', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig({ NODE_ENV: 'production' }).corsOrigins).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'development', PUBLIC_URL: 'https://ws.example.com' }).corsOrigins).toEqual([
      'https://ws.example.com',
      'http://localhost:*',
      'http://127.0.0.1:*',
    ]);
  });
});

describe('security headers', () => {
  const expectHelmet = (headers: Record<string, unknown>, what: string) => {
    expect(headers['x-content-type-options'], what).toBe('nosniff');
    expect(headers['x-frame-options'], what).toBe('SAMEORIGIN');
    expect(headers['referrer-policy'], what).toBe('no-referrer');
    expect(headers['cross-origin-opener-policy'], what).toBe('same-origin');
    expect(String(headers['content-security-policy']), what).toContain("frame-ancestors 'none'");
  };

  it('are on answers, errors and not-found answers alike', async () => {
    expectHelmet((await t.app.inject({ method: 'GET', url: '/api/health' })).headers, 'health');
    expectHelmet((await t.app.inject({ method: 'GET', url: '/api/auth' })).headers, '401');
    expectHelmet((await t.app.inject({ method: 'GET', url: '/api/nothing-here' })).headers, '404');
    expectHelmet(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          headers: { 'content-type': 'application/json' },
          payload: '{',
        })
      ).headers,
      '400',
    );
  });

  it('let the docs UI load: every script and stylesheet of /api/docs is same-origin and served', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    const html =
      page.statusCode === 302
        ? (await t.app.inject({ method: 'GET', url: String(page.headers.location) })).body
        : page.body;
    expectHelmet(page.headers, 'docs');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    // No inline script (the policy would block it) and nothing from another host (the UI works offline).
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>\s*\S/);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => /\.(js|css)$/.test(u));
    expect(assets.length).toBeGreaterThan(1);
    for (const asset of assets) {
      expect(asset, asset).not.toMatch(/^(https?:)?\/\//);
      const url = new URL(asset, 'http://127.0.0.1/api/docs/').pathname;
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expectHelmet(res.headers, url);
    }
    expect(contentSecurityPolicy.connectSrc).toEqual(["'self'"]);
  });
});

describe('X-Request-Id', () => {
  it('keeps a well-formed incoming id and echoes it', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/health',
      headers: { 'x-request-id': 'lb-7f3a.2024:req_42' },
    });
    expect(res.headers['x-request-id']).toBe('lb-7f3a.2024:req_42');
  });

  it('replaces a malformed or overlong id with a new one', async () => {
    for (const bad of ['a'.repeat(129), 'has space', 'quote"d', 'semi;colon', '']) {
      const res = await t.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id'], JSON.stringify(bad)).not.toBe(bad);
      expect(String(res.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('is the id of error answers too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth', headers: { 'x-request-id': 'trace-401' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['x-request-id']).toBe('trace-401');
  });
});
