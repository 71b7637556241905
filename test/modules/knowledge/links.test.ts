// The link crawler against a local web server on 127.0.0.1: refused by
// default under every spelling, reachable with CRAWL_ALLOW_PRIVATE=1.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';

let server: Server;
let port: number;
let base: string;
const requests: string[] = [];
let pdf: Buffer;

/** Requests to /held/* wait until as many are open as the crawl can run at once, then all are answered. */
const held: { open: ServerResponse[]; completed: number; total: number; maxOpen: number } = {
  open: [],
  completed: 0,
  total: 0,
  maxOpen: 0,
};

function page(title: string, body: string) {
  return `<!doctype html><html><head><title>${title}</title><style>.x{}</style></head><body><header>Site menu</header><main><article><h1>${title}</h1>${body}</article></main><footer>© footer</footer></body></html>`;
}

function handle(req: IncomingMessage, res: ServerResponse) {
  requests.push(req.url!);
  const url = new URL(req.url!, base);
  const html = (text: string) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(text);
  };
  if (url.pathname === '/otters')
    return html(
      page(
        'All about otters',
        '<p>Sea otters hold hands while sleeping so they do not drift apart.</p><p>They use rocks as tools to open shellfish.</p>',
      ),
    );
  if (url.pathname === '/plain') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end('Beavers build dams from branches and mud.');
  }
  if (url.pathname === '/manual.pdf') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    return res.end(pdf);
  }
  if (url.pathname === '/hop') {
    const n = Number(url.searchParams.get('n'));
    res.writeHead(301, { location: n > 0 ? `/hop?n=${n - 1}` : '/otters' });
    return res.end();
  }
  if (url.pathname === '/to') {
    res.writeHead(302, { location: url.searchParams.get('target')! });
    return res.end();
  }
  if (url.pathname === '/huge') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end('word '.repeat(40_000));
  }
  if (url.pathname === '/image') {
    res.writeHead(200, { 'content-type': 'image/png' });
    return res.end(Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
  }
  if (url.pathname === '/silent') return; // never answers
  if (url.pathname.startsWith('/held/')) {
    held.open.push(res);
    held.maxOpen = Math.max(held.maxOpen, held.open.length);
    if (held.open.length === Math.min(4, held.total - held.completed)) {
      const batch = held.open.splice(0);
      held.completed += batch.length;
      for (const r of batch) {
        r.writeHead(200, { 'content-type': 'text/plain' });
        r.end(`Held page ${url.pathname} about quokkas.`);
      }
    }
    return;
  }
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('missing');
}

beforeAll(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText('Kiwi birds cannot fly and lay very large eggs.', { x: 40, y: 700, size: 12, font });
  pdf = Buffer.from(await doc.save());
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function baseFor(t: TestApp, token: string) {
  return (
    await t.app.inject({ method: 'PUT', url: '/api/knowledge-bases', headers: bearer(token), payload: { name: 'web' } })
  ).json().id as string;
}
const crawl = (t: TestApp, token: string, id: string, urls: string[]) =>
  t.app.inject({ method: 'POST', url: `/api/knowledge-bases/${id}/links`, headers: bearer(token), payload: { urls } });

describe('links, by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('refuses the local server under its usual and odd spellings, and other schemes, without sending a request', async () => {
    const user = await createVerifiedUser(t);
    const id = await baseFor(t, user.token);
    const before = requests.length;
    const urls = [
      `http://127.0.0.1:${port}/otters`,
      `http://127.1:${port}/otters`,
      `http://0x7f.0.0.1:${port}/otters`,
      `http://0177.0.0.1:${port}/otters`,
      `http://2130706433:${port}/otters`,
      `http://[::ffff:127.0.0.1]:${port}/otters`,
      `http://localhost:${port}/otters`,
      `http://[::1]:${port}/otters`,
      'file:///etc/passwd',
      'gopher://127.0.0.1/',
      'not a url',
    ];
    const res = await crawl(t, user.token, id, urls);
    expect(res.statusCode).toBe(200);
    const { documents, skipped } = res.json();
    expect(documents).toEqual([]);
    expect(skipped.map((s: { url: string }) => s.url).sort()).toEqual([...urls].sort());
    for (const s of skipped.slice(0, 8)) if (s.url.startsWith('http')) expect(s.reason).toMatch(/not a public address/);
    expect(requests.length).toBe(before);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) })).json()
        .documents,
    ).toEqual([]);
  });

  it('refuses an empty list and more than 100 URLs', async () => {
    const user = await createVerifiedUser(t);
    const id = await baseFor(t, user.token);
    expect((await crawl(t, user.token, id, [])).statusCode).toBe(400);
    expect(
      (
        await crawl(
          t,
          user.token,
          id,
          Array.from({ length: 101 }, (_, i) => `https://example.com/${i}`),
        )
      ).statusCode,
    ).toBe(400);
  });
});

describe("links, outside production: the server's own origin (PUBLIC_URL)", () => {
  let t: TestApp;
  let other: Server;
  let otherBase: string;
  beforeAll(async () => {
    // The local web server stands in for this server's own address; a second one for any other local service.
    t = await createTestApp({ env: { PUBLIC_URL: base } });
    other = createServer((_req, res) => res.end('private'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t.close();
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  });

  it('crawls pages of its own origin, and still refuses other local ports and redirects from its origin to them', async () => {
    const user = await createVerifiedUser(t);
    const id = await baseFor(t, user.token);
    const res = await crawl(t, user.token, id, [
      `${base}/otters`,
      `${otherBase}/x`,
      `${base}/to?target=${encodeURIComponent(`${otherBase}/x`)}`,
    ]);
    expect(res.statusCode).toBe(200);
    const { documents, skipped } = res.json();
    expect(documents.map((d: { name: string }) => d.name)).toEqual(['All about otters']);
    expect(skipped.map((s: { url: string }) => s.url).sort()).toEqual(
      [`${otherBase}/x`, `${base}/to?target=${encodeURIComponent(`${otherBase}/x`)}`].sort(),
    );
    for (const s of skipped) expect(s.reason).toMatch(/not a public address/);
  });

  it('is off in production', () => {
    expect(t.config.knowledge.crawlAllowOrigins).toEqual([base]);
    expect(
      loadConfig({ NODE_ENV: 'production', PUBLIC_URL: base, ALLOW_SANDBOX: '1' }, '/tmp').knowledge.crawlAllowOrigins,
    ).toEqual([]);
  });
});

describe('links, with CRAWL_ALLOW_PRIVATE=1', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { CRAWL_ALLOW_PRIVATE: '1' } });
  });
  afterAll(() => t.close());

  // A second app, and its first extraction worker starting (seconds on a loaded machine): more than the default 30 s may pass.
  it('creates documents from pages, text and PDFs, follows redirects, and skips failures with their reason', {
    timeout: 90_000,
  }, async () => {
    // A shorter deadline than 15 s for the page that never answers; long enough for the others
    // (it counts wall time).
    const quick = await createTestApp({
      env: { CRAWL_ALLOW_PRIVATE: '1', CRAWL_MAX_BYTES: '65536' },
      config: { knowledge: { ...t.config.knowledge, crawlMaxBytes: 65536, crawlTimeoutMs: 3000 } },
    });
    try {
      const user = await createVerifiedUser(quick);
      const id = await baseFor(quick, user.token);
      const res = await crawl(quick, user.token, id, [
        `${base}/otters`,
        `${base}/plain`,
        `${base}/manual.pdf`,
        `${base}/hop?n=4`,
        `${base}/hop?n=5`,
        `${base}/missing`,
        `${base}/huge`,
        `${base}/image`,
        `${base}/silent`,
        `${base}/otters`,
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const { documents, skipped } = res.json();
      const byUrl = Object.fromEntries(documents.map((d: { url: string }) => [d.url, d]));
      expect(Object.keys(byUrl).sort()).toEqual(
        [`${base}/hop?n=4`, `${base}/manual.pdf`, `${base}/otters`, `${base}/plain`].sort(),
      );
      expect(byUrl[`${base}/otters`]).toMatchObject({
        name: 'All about otters',
        mimeType: 'text/html',
        source: 'link',
      });
      expect(byUrl[`${base}/hop?n=4`]).toMatchObject({ name: 'All about otters', mimeType: 'text/html' });
      expect(byUrl[`${base}/plain`]).toMatchObject({ mimeType: 'text/plain', name: `${base}/plain` });
      expect(byUrl[`${base}/manual.pdf`]).toMatchObject({ mimeType: 'application/pdf' });
      const reasons = Object.fromEntries(
        skipped.map((s: { url: string; reason: string }) => [s.url.replace(base, ''), s.reason]),
      );
      expect(reasons).toEqual({
        '/hop?n=5': expect.stringMatching(/more than 5 redirects/),
        '/missing': expect.stringMatching(/404/),
        '/huge': expect.stringMatching(/larger than 65536 bytes/),
        '/image': expect.stringMatching(/image\/png is not a supported type/),
        '/silent': expect.stringMatching(/timed out/),
      });

      const search = async (text: string) =>
        (
          await quick.app.inject({
            method: 'POST',
            url: `/api/knowledge-bases/${id}/search`,
            headers: bearer(user.token),
            payload: { text },
          })
        ).json();
      const otters = await search('why do otters hold hands');
      expect(otters[0].text).toContain('hold hands while sleeping');
      expect(otters[0].text).not.toContain('Site menu');
      expect(otters[0].document).toMatchObject({ source: 'link', url: expect.stringContaining(base) });
      expect((await search('kiwi eggs'))[0].document.url).toBe(`${base}/manual.pdf`);
      expect((await search('beavers dams'))[0].document.url).toBe(`${base}/plain`);
    } finally {
      await quick.close();
    }
  });

  it('re-checks each redirect: a page may not send the crawler to another scheme', async () => {
    // Address re-checks on redirects are proven in test/lib/outbound-http.test.ts.
    const user = await createVerifiedUser(t);
    const id = await baseFor(t, user.token);
    const res = await crawl(t, user.token, id, [`${base}/to?target=${encodeURIComponent('ftp://127.0.0.1/x')}`]);
    expect(res.json().skipped[0].reason).toMatch(/only http and https/);
  });

  it('downloads at most 4 links at a time', async () => {
    const user = await createVerifiedUser(t);
    const id = await baseFor(t, user.token);
    const urls = Array.from({ length: 11 }, (_, i) => `${base}/held/${i}`);
    Object.assign(held, { open: [], completed: 0, total: urls.length, maxOpen: 0 });
    const res = await crawl(t, user.token, id, urls);
    expect(res.json().skipped).toEqual([]);
    expect(res.json().documents).toHaveLength(11);
    // The server answered only once 4 (or all remaining) requests were open at the same time.
    expect(held.maxOpen).toBe(4);
    expect(held.completed).toBe(11);
  });
});
