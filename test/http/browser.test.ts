// The SDK in a real browser page on another origin: headless Chromium loads a
// page from one local server and calls the API on another. A listed origin
// signs up and reads its account (preflights, credentials, exposed headers);
// an origin that is not listed gets a WorkspaceNetworkError, as browsers refuse
// the answer. Runs where Chromium is installed (.ci/run installs it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListeningApp, startServer } from '../sdk/support.js';
import { Browser, chromium } from '../support/chromium.js';

/** jose's browser build: the SDK's one dependency, mapped by the page's import map as a bundler would. */
const joseDir = join(process.cwd(), 'node_modules/jose/dist/webapi');

/** Serves the compiled SDK and a page that runs `window.run()` against the API. */
async function startPageServer(sdkDir: string): Promise<{ server: Server; origin: string }> {
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
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.runIf(chromium)('the SDK in a browser page on another origin', () => {
  let sdkDir: string;
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  let api: ListeningApp;
  let browser: Browser;

  beforeAll(async () => {
    sdkDir = mkdtempSync(join(tmpdir(), 'wsapi-sdk-browser-'));
    const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'sdk/tsconfig.build.json', '--outDir', sdkDir], { encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`SDK build failed: ${build.stdout}${build.stderr}`);
    listed = await startPageServer(sdkDir);
    unlisted = await startPageServer(sdkDir);
    api = await startServer({ env: { CORS_ORIGINS: listed.origin } });
    browser = await Browser.launch(chromium!);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    listed?.server.close();
    unlisted?.server.close();
    if (sdkDir) rmSync(sdkDir, { recursive: true, force: true });
  });

  it('signs up, keeps the session in localStorage and reads the account from a listed origin', async () => {
    await browser.open(`${listed.origin}/`, 'window.sdkReady');
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
});
