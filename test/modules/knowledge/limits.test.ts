// Issue 20: files cannot stall or kill the server. Zip-bomb DOCX files, PDFs
// with huge deflated streams, text past the limit, files that take too long
// or too much memory: each is refused by name, nothing of the upload is kept,
// and the worker that read it is replaced.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ExtractionPool } from '../../../src/modules/knowledge/extract-pool.js';
import { ExtractionError } from '../../../src/modules/knowledge/extract.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type FormFile, multipartForm } from '../../support/multipart.js';
import { buildPdf } from '../../support/pdf.js';
import { buildDocx, buildDocxBomb, paragraph } from '../../support/zip.js';

/** HTML that linkedom and Readability take tens of seconds over (measured: 840 KB, 22 s; 3.3 MB, 58 s on the event loop). */
export const slowHtml = (repeats: number) =>
  `<!doctype html><html><body>${'<div><p>word and more words here</p><span>x</span></div>'.repeat(repeats)}</body></html>`;

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      KNOWLEDGE_MAX_INFLATED_MB: '1',
      KNOWLEDGE_MAX_TEXT_MB: '1',
      KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS: '2',
      KNOWLEDGE_EXTRACT_WORKERS: '1',
    },
  });
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

async function createBase(token = user.token) {
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/knowledge-bases',
    headers: bearer(token),
    payload: { name: 'Limits' },
  });
  expect(res.statusCode).toBe(200);
  return res.json().id as string;
}

const upload = (id: string, files: FormFile[], token = user.token) => {
  const form = multipartForm(files);
  return t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${id}`,
    headers: { ...bearer(token), ...form.headers },
    payload: form.payload,
  });
};

async function documentsOf(id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) });
  return res.json().documents as Array<{ name: string }>;
}

/** Chunks of the base in the database: none may be left by a refused upload. */
async function chunkCount(id: string) {
  const row = await t.database.db
    .selectFrom('knowledge_chunks')
    .where('knowledge_base_id', '=', id)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const good: FormFile = { filename: 'good.txt', content: 'Otters hold hands while they sleep.' };

describe('decompression caps (KNOWLEDGE_MAX_INFLATED_MB=1)', () => {
  it('refuses a zip-bomb DOCX by its directory, naming it, and keeps nothing of the upload', async () => {
    const id = await createBase();
    const bomb = buildDocxBomb(40 * 1024 * 1024); // ~140 KB that inflates to 40 MB
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await upload(id, [good, { filename: 'bomb.docx', content: bomb }]);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', file: 'bomb.docx' });
    expect(res.json().message).toMatch(/^bomb\.docx: .*inflates to more than 1048576 bytes/);
    expect(await documentsOf(id)).toEqual([]);
    expect(await chunkCount(id)).toBe(0);
  });

  it('refuses a DOCX whose directory lies about the inflated size, while inflating', async () => {
    const id = await createBase();
    const liar = buildDocxBomb(40 * 1024 * 1024, { declaredSize: 2000 });
    const res = await upload(id, [{ filename: 'liar.docx', content: liar }]);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', file: 'liar.docx' });
    expect(await documentsOf(id)).toEqual([]);
  });

  it('refuses PDFs whose deflated streams inflate past the limit: plain, with a lying /Length, deflated twice', async () => {
    const id = await createBase();
    const cases = [
      { filename: 'stream.pdf', content: buildPdf('A bomb', 20 * 1024 * 1024) },
      { filename: 'length.pdf', content: buildPdf('A bomb', 20 * 1024 * 1024, { declaredLength: 12 }) },
      // ~1 KB that inflates to 60 MB through two FlateDecode filters.
      { filename: 'twice.pdf', content: buildPdf('A bomb', 60 * 1024 * 1024, { deflations: 2 }) },
    ];
    for (const file of cases) {
      const res = await upload(id, [good, file]);
      expect(res.statusCode, file.filename).toBe(413);
      expect(res.json()).toMatchObject({ code: 'payload_too_large', file: file.filename });
      expect(res.json().message).toContain(`${file.filename}: `);
    }
    expect(await documentsOf(id)).toEqual([]);
    expect(await chunkCount(id)).toBe(0);
  });

  it('refuses a file whose text passes KNOWLEDGE_MAX_TEXT_MB (1 MB)', async () => {
    const id = await createBase();
    const res = await upload(id, [{ filename: 'long.txt', content: 'All work and no play.\n\n'.repeat(60_000) }]);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'payload_too_large', file: 'long.txt' });
    expect(res.json().message).toMatch(/more than 1048576 bytes of text/);
    expect(await documentsOf(id)).toEqual([]);
  });

  it('still reads DOCX and PDF files within the limits', async () => {
    const id = await createBase();
    const docx = buildDocx(paragraph('Beavers build dams.') + paragraph('They eat bark.'));
    const pdf = buildPdf('Sea otters use rocks as tools', 200_000); // 200 KB inflated: under the limit
    const res = await upload(id, [
      { filename: 'beavers.docx', content: docx },
      { filename: 'otters.pdf', content: pdf },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json().map((d: { name: string }) => d.name)).toEqual(['beavers.docx', 'otters.pdf']);
    const found = await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}/search`,
      headers: bearer(user.token),
      payload: { text: 'otters rocks' },
    });
    expect(found.json()[0].text).toContain('Sea otters use rocks as tools');
  });
});

// 2 s, not 5: on a faster machine (27 Nov 2026) slow.html was read whole in under 3.9 s, within 5 s, and answered 200.
// The other files of this suite take well under 1 s each, the slow one 3.5-7 s here and ~40 s on the older machines.
describe('time limit per file (KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS=2)', () => {
  it('refuses a file that takes too long (422 file_too_complex, named), keeps nothing, and replaces the worker', async () => {
    const id = await createBase();
    const before = t.services.knowledge.files.stats();
    const started = Date.now();
    const res = await upload(id, [good, { filename: 'slow.html', content: slowHtml(30_000) }]);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'file_too_complex', file: 'slow.html' });
    expect(res.json().message).toMatch(/^slow\.html: took longer than 2 s/);
    expect(Date.now() - started).toBeLessThan(30_000); // reading it whole takes ~40 s
    expect(await documentsOf(id)).toEqual([]);
    expect(await chunkCount(id)).toBe(0);

    // The stopped worker is replaced: the next upload is read by a new one.
    const next = await upload(id, [good]);
    expect(next.statusCode).toBe(200);
    const after = t.services.knowledge.files.stats();
    expect(after.stopped).toBe(before.stopped + 1);
    expect(after.started).toBeGreaterThan(before.started);
  });
});

describe('ExtractionPool', () => {
  const chunking = { sliceBytes: 200 * 1024, chunkSize: 1000, chunkOverlap: 200 };

  it('starts no worker before the first file, stops a worker past its heap limit and replaces it', async () => {
    const pool = new ExtractionPool(
      {
        workers: 1,
        timeoutMs: 120_000,
        memoryMb: 32,
        maxInflatedBytes: 64 * 1024 * 1024,
        maxTextBytes: 16 * 1024 * 1024,
        idleMs: 30_000,
      },
      chunking,
    );
    try {
      expect(pool.stats()).toEqual({ workers: 0, started: 0, stopped: 0, queued: 0 });
      // 23 KB of DOCX: 400,000 one-letter runs, 9 MB of XML (far under the inflation cap), which the parser cannot hold in 32 MB.
      const runs = buildDocx(`<w:p>${'<w:r><w:t>a</w:t></w:r>'.repeat(400_000)}</w:p>`);
      const refused = await pool.prepare('runs.docx', runs).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ExtractionError);
      expect(refused).toMatchObject({
        kind: 'too_complex',
        message: 'needed more than 32 MB of memory to read (the limit per file)',
      });
      const after = await pool.prepare('after.txt', Buffer.from('Read by a fresh worker.'));
      expect(after.slices[0].chunks).toEqual(['Read by a fresh worker.']);
      expect(pool.stats()).toMatchObject({ workers: 1, started: 2, stopped: 1, queued: 0 });
    } finally {
      await pool.close();
    }
  });

  it('runs at most `workers` files at once and stops idle workers', async () => {
    const pool = new ExtractionPool(
      {
        workers: 2,
        timeoutMs: 120_000,
        memoryMb: 128,
        maxInflatedBytes: 1024 * 1024,
        maxTextBytes: 1024 * 1024,
        idleMs: 300,
      },
      chunking,
    );
    try {
      const files = Array.from({ length: 5 }, (_, i) => pool.prepare(`f${i}.txt`, Buffer.from(`File number ${i}.`)));
      expect(pool.stats().queued).toBe(5);
      const read = await Promise.all(files);
      expect(read.map((r) => r.slices[0].text)).toEqual([
        'File number 0.',
        'File number 1.',
        'File number 2.',
        'File number 3.',
        'File number 4.',
      ]);
      expect(pool.stats()).toMatchObject({ started: 2, stopped: 0 });
      // Each worker stops 300 ms after its last file (or after starting, if it got none).
      await vi.waitFor(() => expect(pool.stats().workers).toBe(0), { timeout: 30_000, interval: 100 });
      expect(pool.stats().started).toBe(2);
    } finally {
      await pool.close();
    }
  });
});
