// The console's pages and files (DESIGN.md "Calls from a browser and the
// console"): served by the server with a strict Content-Security-Policy and no
// inline script, every file same-origin; and the API the pages use accepts the
// session cookie the console signs in with, including what a call cost.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { seedCall, seededToolCalls, seededTranscript, stereoWav } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL: 'https://console.example.com' } });
});
afterAll(async () => {
  await t?.close();
});

/** The directives of a CSP header by name. */
function directives(header: unknown): Map<string, string[]> {
  return new Map(
    String(header)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

const PAGES = [
  {
    path: '/console',
    testIds: ['email', 'password', 'sign-in', 'agent-select', 'prompt', 'call', 'hang-up', 'transcript'],
  },
  { path: '/console/calls', testIds: ['email', 'password', 'sign-in', 'call-list'] },
  {
    path: '/console/calls/019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
    testIds: ['email', 'password', 'sign-in', 'transcript', 'latency', 'recording', 'pathway-path', 'call-variables'],
  },
  {
    path: '/console/pathways',
    testIds: ['email', 'password', 'sign-in', 'pathway-list', 'pathway-json', 'pathway-check'],
  },
  { path: '/console/tests', testIds: ['email', 'password', 'sign-in', 'run-tests', 'test-list'] },
  { path: '/console/analytics', testIds: ['email', 'password', 'sign-in', 'analytics-filters'] },
  { path: '/console/campaigns', testIds: ['email', 'password', 'sign-in', 'campaign-list'] },
];

/** The link each page marks as the current one in the navigation. */
const CURRENT: Record<string, string> = {
  '/console': '/console',
  '/console/calls': '/console/calls',
  '/console/calls/019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07': '/console/calls',
  '/console/pathways': '/console/pathways',
  '/console/tests': '/console/tests',
  '/console/analytics': '/console/analytics',
  '/console/campaigns': '/console/campaigns',
};

describe('the console pages', () => {
  it.each(PAGES)(
    '$path is HTML under a strict CSP, with no inline script or style and the stable test ids',
    async ({ path, testIds }) => {
      const page = await t.app.inject({ method: 'GET', url: path });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = directives(page.headers['content-security-policy']);
      expect(csp.get('default-src')).toEqual(["'none'"]);
      // Scripts only from this origin: no 'unsafe-inline', no eval, no other host.
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('script-src-attr')).toEqual(["'none'"]);
      expect(csp.get('style-src')).toEqual(["'self'"]);
      expect(csp.get('connect-src')).toEqual(["'self'", 'https://console.example.com', 'wss://console.example.com']);
      expect(csp.get('media-src')).toEqual(["'self'"]);
      expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
      expect(csp.get('require-trusted-types-for')).toEqual(["'script'"]);
      expect(csp.has('upgrade-insecure-requests')).toBe(true);
      expect(page.headers['x-content-type-options']).toBe('nosniff');

      const html = page.body;
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBe(1);
      for (const [, attributes, body] of scripts) {
        expect(attributes).toMatch(/\bsrc="\/console\/assets\/[a-z-]+\.js"/);
        expect(body.trim()).toBe('');
      }
      expect(html).not.toMatch(/<style\b/);
      expect(html).not.toMatch(/\sstyle="/);
      expect(html).not.toMatch(/\son[a-z]+="/);
      expect(html).not.toMatch(/javascript:/);
      for (const id of testIds) expect(html, id).toContain(`data-testid="${id}"`);
      // Every field has a label.
      for (const [, id] of html.matchAll(/<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"/g))
        expect(html, id).toContain(`for="${id}"`);
    },
  );

  it("puts one header and one sign-in form, the same on every page, around each page's content; the page's own link is current", async () => {
    const shells = new Set<string>();
    for (const { path } of PAGES) {
      const html = (await t.app.inject({ method: 'GET', url: path })).body;
      for (const id of ['sign-in-panel', 'sign-in-form', 'content', 'who', 'sign-out'])
        expect(html.split(`id="${id}"`).length - 1, `${path} #${id}`).toBe(1);
      expect([...html.matchAll(/<nav\b/g)].length, path).toBe(1);
      const current = [...html.matchAll(/<a href="([^"]+)" aria-current="page">/g)].map((m) => m[1]);
      expect(current, path).toEqual([CURRENT[path]]);
      // What is not the page's own: everything but its title, script, stylesheets, current link and content.
      shells.add(
        html
          .replace(/<title>[^<]*<\/title>/, '')
          .replace(/<script[^>]*><\/script>/, '')
          .replace(/<link rel="stylesheet"[^>]*>\n/g, '')
          .replace(' aria-current="page"', '')
          .replace(/<main id="main" tabindex="-1"[^>]*>/, '<main>')
          .replace(/ {2}<section id="content"[\s\S]*<\/main>/, '</main>'),
      );
    }
    expect(shells.size).toBe(1);
  });

  it('serves every file a page names, and every module those files import, from this origin under the same CSP', async () => {
    const seen = new Set<string>();
    const queue = PAGES.map((p) => p.path);
    while (queue.length) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(directives(res.headers['content-security-policy']).get('script-src'), url).toEqual(["'self'"]);
      const text = res.body;
      const named = [
        ...[...text.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]!).filter((u) => /\.(js|css)$/.test(u)),
        ...[...text.matchAll(/(?:from|import\()\s*'([^']+\.js)'/g)].map((m) => m[1]!),
        ...[...text.matchAll(/'(\/console\/assets\/[a-z-]+\.js)'/g)].map((m) => m[1]!),
      ];
      for (const asset of named) {
        expect(asset, asset).not.toMatch(/^(https?:)?\/\//);
        queue.push(new URL(asset, `http://x${url}`).pathname);
      }
    }
    const files = [...seen].filter((u) => u.startsWith('/console/assets/'));
    expect(files).toEqual(
      expect.arrayContaining([
        '/console/assets/console.css',
        '/console/assets/common.js',
        '/console/assets/web-call.js',
        '/console/assets/capture-worklet.js',
        '/console/assets/agents.js',
        '/console/assets/pathway-graph.js',
        '/console/assets/dagre.js',
      ]),
    );
    // The layout library comes from its installed package (assets.ts VENDOR), an ES module with no source map to fetch.
    const dagre = await t.app.inject({ method: 'GET', url: '/console/assets/dagre.js' });
    expect(dagre.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(dagre.body).toMatch(/export\s*\{[^}]*\blayout\b/);
    expect(dagre.body).not.toContain('sourceMappingURL');
    const worklet = await t.app.inject({ method: 'GET', url: '/console/assets/capture-worklet.js' });
    expect(worklet.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(worklet.body).toContain("registerProcessor('pcm16-capture'");
  });

  it('answers 304 to a matching If-None-Match, 404 for files it does not have, and redirects /console/', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/console/assets/console.css' });
    expect(first.headers['content-type']).toBe('text/css; charset=utf-8');
    const again = await t.app.inject({
      method: 'GET',
      url: '/console/assets/console.css',
      headers: { 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    for (const url of [
      '/console/assets/nothing.js',
      '/console/assets/..%2Fassets.ts',
      '/console/assets/index.html',
      '/console/assets/routes.ts',
    ]) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const slash = await t.app.inject({ method: 'GET', url: '/console/' });
    expect(slash.statusCode).toBe(301);
    expect(slash.headers.location).toBe('/console');
  });

  it('are not API routes: they stay out of the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });
});

describe('the API behind the console, with the session cookie it signs in with', () => {
  let user: TestUser;
  let cookie: string;
  beforeAll(async () => {
    user = await createVerifiedUser(t);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.email, password: user.password },
    });
    expect(login.json().status).toBe('ok');
    const setCookie = ([] as string[]).concat(login.headers['set-cookie'] ?? []);
    const token = setCookie.find((c) => c.startsWith('token='));
    expect(token).toMatch(/HttpOnly/i);
    cookie = token!.split(';')[0]!;
  });

  it('lists the calls with direction, numbers, duration and what each cost; a web call costs nothing', async () => {
    const paid = await seedCall(t, user, {
      from: '+14155550100',
      to: '+14155550123',
      durationSeconds: 75,
      chargedCents: 4,
      startedAt: Date.now() - 60_000,
    });
    const web = await seedCall(t, user, { direction: 'web', durationSeconds: 30 });
    const running = await seedCall(t, user, { status: 'in_progress', from: '+14155550100', to: '+14155550124' });
    expect((await t.app.inject({ method: 'GET', url: '/api/calls' })).statusCode).toBe(401);
    const list = await t.app.inject({ method: 'GET', url: '/api/calls', headers: { cookie } });
    expect(list.statusCode).toBe(200);
    const calls = list.json().calls as Array<Record<string, unknown>>;
    expect(calls.map((c) => c.id)).toEqual([running, web, paid]);
    expect(calls[2]).toMatchObject({
      direction: 'outbound',
      status: 'completed',
      from: '+14155550100',
      to: '+14155550123',
      durationSeconds: 75,
      costUsd: 0.04,
    });
    expect(calls[1]).toMatchObject({ direction: 'web', durationSeconds: 30 });
    expect(calls[1]!.costUsd).toBeUndefined();
    expect(calls[0]!.costUsd).toBeUndefined();
    expect(calls[0]!.durationSeconds).toBeUndefined();
    // One call adds the same figure.
    expect((await t.app.inject({ method: 'GET', url: `/api/calls/${paid}`, headers: { cookie } })).json().costUsd).toBe(
      0.04,
    );
  });

  it("reads one call's transcript, tool calls, latency and recording with the cookie, as the call page does; another account's call is 404", async () => {
    const id = await seedCall(t, user, {
      direction: 'web',
      transcript: seededTranscript,
      toolCalls: seededToolCalls,
      recording: stereoWav(1),
    });
    const view = await t.app.inject({ method: 'GET', url: `/api/calls/${id}`, headers: { cookie } });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({
      id,
      direction: 'web',
      transcript: seededTranscript,
      toolCalls: seededToolCalls,
      recordingUrl: `/api/calls/${id}/recording`,
    });
    const wav = await t.app.inject({ method: 'GET', url: `/api/calls/${id}/recording`, headers: { cookie } });
    expect(wav.statusCode).toBe(200);
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(wav.rawPayload.equals(stereoWav(1))).toBe(true);

    const other = await createVerifiedUser(t);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/calls/${id}`, headers: bearer(other.token) })).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/calls/${id}/recording`, headers: bearer(other.token) }))
        .statusCode,
    ).toBe(404);
  });
});
