// Issue 20: while one user uploads and crawls the worst files we can make
// (zip-bomb DOCX files, a DOCX whose directory lies, a PDF deflated twice,
// HTML that takes a minute to parse, a 23 KB DOCX that needs gigabytes), another
// user's GET /api/auth still answers at once: the files are read in worker
// threads, so the event loop is never blocked by them. Real sockets.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type FormFile, multipartForm } from '../../support/multipart.js';
import { buildPdf } from '../../support/pdf.js';
import { buildDocx, buildDocxBomb } from '../../support/zip.js';

const slowHtml = (repeats: number) =>
  `<!doctype html><html><body>${'<div><p>word and more words here</p><span>x</span></div>'.repeat(repeats)}</body></html>`;

let t: TestApp;
let url: string;
let pages: Server;
let pagesOrigin: string;
let attacker: TestUser;
let victim: TestUser;
const agent = new Agent({ connections: 16 });

beforeAll(async () => {
  t = await createTestApp({ env: { KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS: '3', CRAWL_ALLOW_PRIVATE: '1' } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const html = slowHtml(60_000);
  pages = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  attacker = await createVerifiedUser(t);
  victim = await createVerifiedUser(t);
});
afterAll(async () => {
  await new Promise((resolve) => pages.close(resolve));
  await t.close();
  await agent.close();
});

/** The worst files: each must be refused without holding the event loop. */
function worstFiles(): FormFile[] {
  return [
    // ~2.3 MB of zip-bomb DOCX files, as in the report: each ~230 KB inflating to 64+ MB.
    ...Array.from({ length: 5 }, (_, i) => ({ filename: `bomb-${i}.docx`, content: buildDocxBomb(70 * 1024 * 1024) })),
    ...Array.from({ length: 5 }, (_, i) => ({
      filename: `liar-${i}.docx`,
      content: buildDocxBomb(70 * 1024 * 1024, { declaredSize: 1000 }),
    })),
    { filename: 'twice.pdf', content: buildPdf('A bomb', 200 * 1024 * 1024, { deflations: 2 }) },
    // 23 KB: 9 MB of one-letter runs, slow to parse and large in memory.
    { filename: 'runs.docx', content: buildDocx(`<w:p>${'<w:r><w:t>a</w:t></w:r>'.repeat(400_000)}</w:p>`) },
    // 3.3 MB of HTML that took 58 s on the event loop.
    { filename: 'slow.html', content: slowHtml(60_000) },
  ];
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

describe('one user uploading the worst files does not stall another', () => {
  it("keeps the other user's GET /api/auth fast and the event loop free", { timeout: 300_000 }, async () => {
    const baseRes = await request(`${url}/api/knowledge-bases`, {
      method: 'PUT',
      dispatcher: agent,
      headers: { ...bearer(attacker.token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Worst' }),
    });
    const baseId = ((await baseRes.body.json()) as { id: string }).id;

    // Warm up (connections, the victim's route) before measuring.
    for (let i = 0; i < 5; i += 1)
      await (await request(`${url}/api/auth`, { dispatcher: agent, headers: bearer(victim.token) })).body.dump();

    const files = worstFiles();
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let attacking = true;
    const answers: Array<{ file: string; status: number; code?: string }> = [];
    const attack = (async () => {
      // Each file in its own request, all at once (a file refused ends its request), plus a crawl of the slow page.
      const uploads = files.map(async (file) => {
        const form = multipartForm([file]);
        const res = await request(`${url}/api/knowledge-bases/${baseId}`, {
          method: 'POST',
          dispatcher: agent,
          headers: { ...bearer(attacker.token), ...form.headers },
          body: form.payload,
        });
        const body = (await res.body.json()) as { code?: string; file?: string };
        answers.push({ file: file.filename, status: res.statusCode, code: body.code });
      });
      const crawl = (async () => {
        const res = await request(`${url}/api/knowledge-bases/${baseId}/links`, {
          method: 'POST',
          dispatcher: agent,
          headers: { ...bearer(attacker.token), 'content-type': 'application/json' },
          body: JSON.stringify({ urls: [`${pagesOrigin}/slow-1`, `${pagesOrigin}/slow-2`] }),
        });
        const body = (await res.body.json()) as { documents: unknown[]; skipped: Array<{ reason: string }> };
        answers.push({ file: 'crawl', status: res.statusCode, code: body.skipped.map((s) => s.reason).join('|') });
      })();
      await Promise.all([...uploads, crawl]);
      attacking = false;
    })();

    const latencies: number[] = [];
    while (attacking) {
      const started = performance.now();
      const res = await request(`${url}/api/auth`, { dispatcher: agent, headers: bearer(victim.token) });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await attack;
    delay.disable();

    latencies.sort((a, b) => a - b);
    const figures = {
      requests: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1),
      loopMaxMs: delay.max / 1e6,
      loopP99Ms: delay.percentile(99) / 1e6,
    };
    console.log('isolation:', JSON.stringify(figures), JSON.stringify(answers));

    // Every worst file was refused by name with a stable code; nothing was kept.
    expect(
      answers
        .filter((a) => a.file !== 'crawl')
        .map((a) => [a.file, a.status, a.code])
        .sort(),
    ).toEqual(
      files
        .map((f) => [
          f.filename,
          f.filename === 'runs.docx' || f.filename === 'slow.html' ? 422 : 413,
          f.filename === 'runs.docx' || f.filename === 'slow.html' ? 'file_too_complex' : 'payload_too_large',
        ])
        .sort(),
    );
    expect(answers.find((a) => a.file === 'crawl')?.code).toMatch(/took longer than 3 s.*\|.*took longer than 3 s/);
    const docs = await request(`${url}/api/knowledge-bases/${baseId}`, {
      dispatcher: agent,
      headers: bearer(attacker.token),
    });
    expect(((await docs.body.json()) as { documents: unknown[] }).documents).toEqual([]);

    // On the event loop these files froze every request for tens of seconds
    // (slow.html alone: 58 s). The bounds are generous for a shared 2-core test
    // machine at load average ~16, where the longest stall seen was 0.8 s
    // (scheduling, not our code) and the loop's p99 0.12 s.
    expect(latencies.length).toBeGreaterThan(20);
    expect(figures.p99).toBeLessThan(1000);
    expect(figures.loopP99Ms).toBeLessThan(300);
    expect(figures.loopMaxMs).toBeLessThan(2000);
  });
});
