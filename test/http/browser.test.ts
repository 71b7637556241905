// The SDK in a real browser page on another origin: headless Chromium loads a
// page from one local server and calls the API on another. A listed origin
// signs up and reads its account (preflights, credentials, exposed headers);
// an origin that is not listed gets a WorkspaceNetworkError, as browsers refuse
// the answer. A page on another *site* (localhost, while the API is on
// 127.0.0.1) follows events through the SDK and through a plain EventSource,
// both with a ticket (POST /api/events/ticket), and reads an object's ETag.
// Runs where Chromium is installed (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifiedUser } from '../support/factories.js';
import { emit } from '../modules/events/support.js';
import { type ListeningApp, startServer } from '../sdk/support.js';
import { Browser, chromium } from '../support/chromium.js';

/** jose's browser build: the SDK's one dependency, mapped by the page's import map as a bundler would. */
const joseDir = join(process.cwd(), 'node_modules/jose/dist/webapi');

/** Serves the compiled SDK and a page that runs `window.run()` against the API. */
async function startPageServer(sdkDir: string, host = '127.0.0.1'): Promise<{ server: Server; origin: string }> {
  const page = `<!doctype html><meta charset="utf-8"><script type="importmap">{"imports":{"jose":"/jose/index.js"}}</script><script type="module">
    import * as sdk from './sdk/index.js';
    window.sdk = sdk;
    window.sdkReady = true;
  </script>`;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      return;
    }
    const [root, prefix] = path.startsWith('/jose/') ? [joseDir, /^\/jose\//] : [sdkDir, /^\/sdk\//];
    const file = normalize(join(root, path.replace(prefix, '/')));
    if (!(path.startsWith('/sdk/') || path.startsWith('/jose/')) || !file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream' })
      .end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}` };
}

describe.runIf(chromium)('the SDK in a browser page on another origin', () => {
  let sdkDir: string;
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  /** Served as http://localhost:<port>: another site than the API's 127.0.0.1. */
  let otherSite: { server: Server; origin: string };
  let api: ListeningApp;
  let browser: Browser;

  beforeAll(async () => {
    sdkDir = mkdtempSync(join(tmpdir(), 'wsapi-sdk-browser-'));
    const build = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'sdk/tsconfig.build.json', '--outDir', sdkDir],
      { encoding: 'utf8' },
    );
    if (build.status !== 0) throw new Error(`SDK build failed: ${build.stdout}${build.stderr}`);
    listed = await startPageServer(sdkDir);
    unlisted = await startPageServer(sdkDir);
    otherSite = await startPageServer(sdkDir, 'localhost');
    api = await startServer({ env: { CORS_ORIGINS: `${listed.origin},${otherSite.origin}` } });
    browser = await Browser.launch(chromium!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    listed?.server.close();
    unlisted?.server.close();
    otherSite?.server.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  it('signs up, keeps the session in localStorage and reads the account from a listed origin', async () => {
    await browser.open(`${listed.origin}/`, 'window.sdkReady');
    const result = await browser.evaluate<{
      status: string;
      stored: boolean;
      requestId: string | null;
      health: string;
    }>(`
      const client = new window.sdk.WorkspaceClient({ baseUrl: ${JSON.stringify(api.baseUrl)} });
      const email = 'browser' + Date.now() + '@example.com';
      const password = 'correct horse battery staple';
      const session = await client.auth.register({ firstName: 'Ada', lastName: 'L', email, phone: '+14155550199', password, confirmPassword: password });
      const status = (await client.auth.status()).status;
      const response = await fetch(${JSON.stringify(`${api.baseUrl}/api/health`)});
      return {
        status,
        stored: localStorage.getItem('workspace-api.token') === session.token,
        requestId: response.headers.get('x-request-id'),
        health: (await response.json()).status,
      };
    `);
    expect(result).toEqual({
      status: 'phone_not_verified',
      stored: true,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      health: 'ok',
    });
  });

  it('refuses an origin that is not listed: the SDK reports a network error naming the URL', async () => {
    await browser.open(`${unlisted.origin}/`, 'window.sdkReady');
    const result = await browser.evaluate<{ name: string; url: string }>(`
      const client = new window.sdk.WorkspaceClient({ baseUrl: ${JSON.stringify(api.baseUrl)} });
      try {
        await client.auth.status();
        return { name: 'no error', url: '' };
      } catch (error) {
        return { name: error.name, url: error.url };
      }
    `);
    expect(result).toEqual({ name: 'WorkspaceNetworkError', url: `${api.baseUrl}/api/auth` });
  });

  it('follows events from a page on another site: the SDK and a plain EventSource open their streams with a ticket', async () => {
    const user = await createVerifiedUser(api.t);
    await browser.open(`${otherSite.origin}/`, 'window.sdkReady');
    const opened = await browser.evaluate<{ streamUrls: string[]; streamAuthorization: Array<string | null> }>(`
      window.received = { sdk: [], eventSource: [] };
      const streamUrls = [];
      const streamAuthorization = [];
      const recordingFetch = (url, init) => {
        if (url.includes('/api/events/') && !url.includes('/api/events/ticket')) {
          streamUrls.push(url);
          streamAuthorization.push(new Headers(init.headers).get('authorization'));
        }
        return fetch(url, init);
      };
      const base = ${JSON.stringify(api.baseUrl)};
      const token = ${JSON.stringify(user.token)};
      const client = new window.sdk.WorkspaceClient({ baseUrl: base, token, storage: window.sdk.memoryStorage(), fetch: recordingFetch });
      window.subscription = client.events.subscribe('object_deleted', { onEvent: (event) => window.received.sdk.push(event.data.object_id) });
      await window.subscription.ready;

      const answer = await fetch(base + '/api/events/ticket', { method: 'POST', headers: { authorization: 'Bearer ' + token } });
      const { ticket } = await answer.json();
      await new Promise((resolve, reject) => {
        window.eventSource = new EventSource(base + '/api/events/object_deleted?ticket=' + encodeURIComponent(ticket));
        window.eventSource.addEventListener('object_deleted', (event) => window.received.eventSource.push(JSON.parse(event.data).object_id));
        window.eventSource.onopen = () => resolve();
        window.eventSource.onerror = () => reject(new Error('EventSource failed: readyState ' + window.eventSource.readyState));
      });
      return { streamUrls, streamAuthorization };
    `);
    expect(opened.streamUrls).toHaveLength(1);
    expect(opened.streamUrls[0]).toMatch(/\/api\/events\/object_deleted\?ticket=[\w.-]+$/);
    expect(opened.streamAuthorization).toEqual([null]);

    await emit(api.t, user.id, [
      ['object_deleted', { object_id: 'seen-across-sites', deleted_at: '2026-11-26T10:00:00.000Z' }],
    ]);
    const received = await browser.evaluate<{ sdk: string[]; eventSource: string[] }>(`
      const deadline = Date.now() + 5000;
      while ((window.received.sdk.length < 1 || window.received.eventSource.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      window.eventSource.close();
      await window.subscription.close();
      return window.received;
    `);
    expect(received).toEqual({ sdk: ['seen-across-sites'], eventSource: ['seen-across-sites'] });
  });

  it('reads the ETag of an object from another site (exposed by CORS), for If-Match', async () => {
    const user = await createVerifiedUser(api.t);
    await browser.open(`${otherSite.origin}/`, 'window.sdkReady');
    const etag = await browser.evaluate<string | null>(`
      const base = ${JSON.stringify(api.baseUrl)};
      const headers = { authorization: 'Bearer ' + ${JSON.stringify(user.token)} };
      const root = await (await fetch(base + '/api/root', { headers })).json();
      const response = await fetch(base + '/api/objects/' + root.stores.contacts.id, { headers });
      return response.headers.get('etag');
    `);
    expect(etag).toBe('"1"');
  });
});
