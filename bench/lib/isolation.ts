// Issue 20: one user uploads and crawls the worst files we can make while
// another reads GET /api/auth; reports the other user's latency. The files
// (test/support's zip and PDF writers) are each refused by the server's
// limits in its extraction workers; on the event loop they froze every
// request for tens of seconds (a 40 KB DOCX: 52 s) or killed the process.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { buildPdf } from '../../test/support/pdf.js';
import { buildDocx, buildDocxBomb } from '../../test/support/zip.js';

export interface IsolationResults {
  backend: string;
  seconds: number;
  /** The same reads before the attack, on the same server and machine: what the load average alone costs. */
  baseline: { requests: number; errors: number; p50: number | null; p99: number | null; max: number | null };
  /** The other user's GET /api/auth, one request after another, during the attack. */
  victim: { requests: number; errors: number; p50: number | null; p99: number | null; max: number | null };
  /** The attacker's uploads and crawls answered within the time, uploads by HTTP status (every worst file is refused: 413 or 422). */
  attacker: { uploads: number; crawls: number; statuses: Record<string, number> };
}

const slowHtml = (repeats: number) =>
  `<!doctype html><html><body>${'<div><p>word and more words here</p><span>x</span></div>'.repeat(repeats)}</body></html>`;

/** The worst files: ~2.3 MB of zip-bomb DOCX (honest and lying directories), a PDF deflated twice, a 23 KB DOCX of 400,000 runs, 3.3 MB of slow HTML. */
export function worstFiles(): Array<{ filename: string; content: Buffer }> {
  return [
    ...Array.from({ length: 5 }, (_, i) => ({ filename: `bomb-${i}.docx`, content: buildDocxBomb(70 * 1024 * 1024) })),
    ...Array.from({ length: 5 }, (_, i) => ({
      filename: `liar-${i}.docx`,
      content: buildDocxBomb(70 * 1024 * 1024, { declaredSize: 1000 }),
    })),
    { filename: 'twice.pdf', content: buildPdf('A bomb', 200 * 1024 * 1024, { deflations: 2 }) },
    { filename: 'runs.docx', content: buildDocx(`<w:p>${'<w:r><w:t>a</w:t></w:r>'.repeat(400_000)}</w:p>`) },
    { filename: 'slow.html', content: Buffer.from(slowHtml(60_000)) },
  ];
}

function multipart(file: { filename: string; content: Buffer }): { body: Buffer; contentType: string } {
  const boundary = `----bench${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="files"; filename="${file.filename}"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  return {
    body: Buffer.concat([head, file.content, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null;
const round = (n: number | null) => (n === null ? null : Math.round(n * 10) / 10);

/**
 * For `seconds`: the attacker keeps `attackers` uploads (one worst file each,
 * in turn) and one crawl of two slow pages in flight; the victim reads GET
 * /api/auth one request after another. The server must run with
 * CRAWL_ALLOW_PRIVATE=1 (the slow pages are served from this process).
 */
export async function runUploadIsolation(options: {
  backend: string;
  base: string;
  attackerJwt: string;
  victimJwt: string;
  seconds: number;
  attackers?: number;
}): Promise<IsolationResults> {
  const agent = new Agent({ connections: 16 });
  const html = slowHtml(60_000);
  const pages: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const pagesOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const auth = (jwt: string) => ({ authorization: `Bearer ${jwt}` });
  try {
    const created = await request(`${options.base}/api/knowledge-bases`, {
      method: 'PUT',
      dispatcher: agent,
      headers: { ...auth(options.attackerJwt), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'worst files' }),
    });
    const baseId = ((await created.body.json()) as { id: string }).id;
    const files = worstFiles().map(multipart);
    for (let i = 0; i < 5; i += 1)
      await (
        await request(`${options.base}/api/auth`, { dispatcher: agent, headers: auth(options.victimJwt) })
      ).body.dump();
    const readAuth = async (until: number) => {
      const latencies: number[] = [];
      let errors = 0;
      while (Date.now() < until) {
        const started = performance.now();
        const res = await request(`${options.base}/api/auth`, {
          dispatcher: agent,
          headers: auth(options.victimJwt),
        }).catch(() => null);
        await res?.body.dump();
        if (res?.statusCode === 200) latencies.push(performance.now() - started);
        else errors += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      latencies.sort((a, b) => a - b);
      return {
        requests: latencies.length,
        errors,
        p50: round(percentile(latencies, 50)),
        p99: round(percentile(latencies, 99)),
        max: round(latencies.at(-1) ?? null),
      };
    };
    const baseline = await readAuth(Date.now() + Math.min(10, options.seconds / 3) * 1000);

    const statuses: Record<string, number> = {};
    let uploads = 0;
    let crawls = 0;
    const until = Date.now() + options.seconds * 1000;
    // The attacker's requests in flight when the time is up are abandoned (a refused file can take the
    // whole time limit per file to be refused), so the scenario ends on time.
    const stop = AbortSignal.timeout(options.seconds * 1000);
    let next = 0;
    const uploader = async () => {
      while (Date.now() < until) {
        const file = files[next++ % files.length];
        const res = await request(`${options.base}/api/knowledge-bases/${baseId}`, {
          method: 'POST',
          dispatcher: agent,
          signal: stop,
          headers: { ...auth(options.attackerJwt), 'content-type': file.contentType },
          body: file.body,
        }).catch(() => null);
        await res?.body.dump().catch(() => {});
        if (!res) break; // abandoned at the end
        statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
        uploads += 1;
      }
    };
    const crawler = async () => {
      while (Date.now() < until) {
        const res = await request(`${options.base}/api/knowledge-bases/${baseId}/links`, {
          method: 'POST',
          dispatcher: agent,
          signal: stop,
          headers: { ...auth(options.attackerJwt), 'content-type': 'application/json' },
          body: JSON.stringify({ urls: [`${pagesOrigin}/slow-${crawls}-a`, `${pagesOrigin}/slow-${crawls}-b`] }),
        }).catch(() => null);
        await res?.body.dump().catch(() => {});
        if (!res) break;
        crawls += 1;
      }
    };
    const [victim] = await Promise.all([
      readAuth(until),
      ...Array.from({ length: options.attackers ?? 3 }, uploader),
      crawler(),
    ]);
    return {
      backend: options.backend,
      seconds: options.seconds,
      baseline,
      victim,
      attacker: { uploads, crawls, statuses },
    };
  } finally {
    await new Promise((resolve) => pages.close(resolve));
    await agent.close();
  }
}
