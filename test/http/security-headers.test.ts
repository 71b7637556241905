// Security headers built once at start (issue 26): JSON answers carry the set
// that matters for JSON, HTML pages exactly what helmet wrote before.
import helmet from 'helmet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, securityHeaderSets } from '../../src/http/security.js';
import { type TestApp, createTestApp } from '../support/app.js';

/** What helmet 8 wrote for the pages with our options (the plugin before issue 26), collected from a fake response. */
function helmetWrote(https: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: () => {},
  };
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { ...contentSecurityPolicy, ...(https ? { upgradeInsecureRequests: [] } : {}) },
    },
    strictTransportSecurity: https ? { maxAge: 180 * 24 * 3600, includeSubDomains: false } : false,
  })({} as never, res as never, () => {});
  return headers;
}

const API_SET = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
};
const DOCUMENT_ONLY = ['origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-xss-protection'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { RETURN_URL_ORIGINS: 'https://app.example.com' } });
});
afterAll(() => t.close());

describe('security headers', () => {
  it('JSON answers (success, 401, 404, 400) carry the API set: a policy that loads nothing, nosniff, no framing, and nothing document-only', async () => {
    const answers = [
      await t.app.inject({ method: 'GET', url: '/api/health' }),
      await t.app.inject({ method: 'GET', url: '/api/auth' }),
      await t.app.inject({ method: 'GET', url: '/api/nothing-here' }),
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: '{',
      }),
    ];
    for (const res of answers) {
      for (const [name, value] of Object.entries(API_SET))
        expect(res.headers[name], `${res.statusCode} ${name}`).toBe(value);
      for (const name of DOCUMENT_ONLY) expect(res.headers[name], `${res.statusCode} ${name}`).toBeUndefined();
      expect(res.headers['strict-transport-security']).toBeUndefined(); // plain-HTTP PUBLIC_URL
    }
  });

  it('HTML pages (the docs UI) carry exactly what helmet wrote with the page policy', async () => {
    const expected = helmetWrote(false);
    expect(Object.keys(expected).length).toBeGreaterThan(8);
    const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    const html =
      page.statusCode === 302 ? await t.app.inject({ method: 'GET', url: String(page.headers.location) }) : page;
    expect(html.headers['content-type']).toMatch(/text\/html/);
    for (const res of [page, html])
      for (const [name, value] of Object.entries(expected)) expect(res.headers[name], name).toBe(value);
  });

  it('over HTTPS both sets carry HSTS as helmet wrote it, and the page policy upgrades insecure requests', () => {
    const sets = securityHeaderSets('https://ws.example.com');
    const expected = helmetWrote(true);
    expect(sets.html).toEqual(expected);
    expect(sets.api['strict-transport-security']).toBe(expected['strict-transport-security']);
    expect(sets.html['content-security-policy']).toContain('upgrade-insecure-requests');
    expect(securityHeaderSets('http://localhost:3000').html).toEqual(helmetWrote(false));
  });
});
