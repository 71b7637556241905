// The SDK in a real browser page on another origin: headless Chromium loads a
// page from one local server and calls the API on another. A listed origin
// signs up and reads its account (preflights, credentials, exposed headers);
// an origin that is not listed gets a WorkspaceNetworkError, as browsers refuse
// the answer. A page on another *site* (localhost, while the API is on
// 127.0.0.1) follows events through the SDK and through a plain EventSource,
// both with a ticket (POST /api/events/ticket), and reads an object's ETag.
// Runs where Chromium is installed (.ci/run installs it).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { WebSocket } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifiedUser } from '../support/factories.js';
import { emit } from '../modules/events/support.js';
import { type ListeningApp, startServer } from '../sdk/support.js';

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

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
    res.writeHead(200, { 'content-type': extname(file) === '.js' ? 'text/javascript' : 'application/octet-stream' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}` };
}

/** A minimal Chrome DevTools Protocol client over the browser's page target. */
class Browser {
  private constructor(
    private readonly process: ChildProcess,
    private readonly profile: string,
    private readonly socket: WebSocket,
  ) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  static async launch(binary: string): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'wsapi-chromium-'));
    const child = spawn(
      binary,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--remote-debugging-address=127.0.0.1',
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        'about:blank',
      ],
      // Its own process group: Chromium's helpers (zygotes, renderers, the GPU,
      // network and storage services) join it, so close() can wait for all of them.
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    const browserUrl = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stderr!.on('data', (chunk) => {
        text += chunk;
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`chromium exited with ${code}: ${text}`)));
    });
    const { port } = new URL(browserUrl);
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ type: string; webSocketDebuggerUrl: string }>;
    const pageTarget = targets.find((t) => t.type === 'page');
    if (!pageTarget) throw new Error('chromium has no page target');
    const socket = new WebSocket(pageTarget.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      socket.addEventListener('error', () => reject(new Error('cannot connect to chromium')));
    });
    return new Browser(child, profile, socket);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** Runs an async function body in the page and returns its JSON result. */
  async evaluate<T>(body: string): Promise<T> {
    const answer = (await this.send('Runtime.evaluate', { expression: `(async () => { ${body} })()`, awaitPromise: true, returnByValue: true })) as {
      result: { value?: T };
      exceptionDetails?: { exception?: { description?: string }; text: string };
    };
    if (answer.exceptionDetails) throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
    return answer.result.value as T;
  }

  async open(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
    await this.evaluate(`while (!window.sdkReady) await new Promise((r) => setTimeout(r, 20));`);
  }

  /**
   * Stops Chromium, then removes its profile. The browser process exiting is
   * not enough: its helper processes (the storage service among them) can
   * still be writing into the profile for a moment, and removing it then fails
   * with ENOTEMPTY. So the whole process group is stopped and waited for.
   */
  async close(): Promise<void> {
    this.socket.close();
    const group = this.process.pid!;
    const running = () => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false; // ESRCH: nobody is left in the group
      }
    };
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-group, name);
      } catch {
        // the group is already gone
      }
    };
    const exited = this.process.exitCode !== null || this.process.signalCode !== null ? Promise.resolve() : new Promise((resolve) => this.process.once('exit', resolve));
    signal('SIGTERM');
    await exited;
    // Bounded: after 10 s whatever is left is killed outright.
    for (let waited = 0; running(); waited += 20) {
      if (waited === 10_000) signal('SIGKILL');
      if (waited > 20_000) throw new Error(`chromium's process group ${group} did not exit`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
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
    const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'sdk/tsconfig.build.json', '--outDir', sdkDir], { encoding: 'utf8' });
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
    await browser.open(`${listed.origin}/`);
    const result = await browser.evaluate<{ status: string; stored: boolean; requestId: string | null; health: string }>(`
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
    expect(result).toEqual({ status: 'phone_not_verified', stored: true, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), health: 'ok' });
  });

  it('refuses an origin that is not listed: the SDK reports a network error naming the URL', async () => {
    await browser.open(`${unlisted.origin}/`);
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
    await browser.open(`${otherSite.origin}/`);
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

    await emit(api.t, user.id, [['object_deleted', { object_id: 'seen-across-sites', deleted_at: '2026-11-26T10:00:00.000Z' }]]);
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
    await browser.open(`${otherSite.origin}/`);
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
