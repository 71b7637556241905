// Issue 20: a per-user knowledge quota (documents, chunks, bytes over all the
// user's bases); uploads and crawled links count alike; 413 quota_exceeded
// says what is used and what is allowed, and nothing of the refused write is kept.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type FormFile, multipartForm } from '../../support/multipart.js';

let t: TestApp;
let server: Server;
let origin: string;
beforeAll(async () => {
  t = await createTestApp({
    env: {
      KNOWLEDGE_QUOTA_DOCUMENTS: '4',
      KNOWLEDGE_QUOTA_CHUNKS: '40',
      KNOWLEDGE_QUOTA_MB: '1',
      CRAWL_ALLOW_PRIVATE: '1',
    },
  });
  server = createServer((req, res) => {
    const n = new URL(req.url!, 'http://x').pathname.slice(1);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`Page ${n} tells of otters number ${n}.`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

async function createBase(user: TestUser, name = 'Quota') {
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/knowledge-bases',
    headers: bearer(user.token),
    payload: { name },
  });
  expect(res.statusCode).toBe(200);
  return res.json().id as string;
}

const upload = (user: TestUser, id: string, files: FormFile[]) => {
  const form = multipartForm(files);
  return t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${id}`,
    headers: { ...bearer(user.token), ...form.headers },
    payload: form.payload,
  });
};
const links = (user: TestUser, id: string, urls: string[]) =>
  t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${id}/links`,
    headers: bearer(user.token),
    payload: { urls },
  });
const txt = (name: string, text = `The ${name} file is about beavers.`): FormFile => ({
  filename: `${name}.txt`,
  content: text,
});

async function documentCount(user: TestUser) {
  const row = await t.database.db
    .selectFrom('knowledge_documents as d')
    .innerJoin('knowledge_bases as b', 'b.id', 'd.knowledge_base_id')
    .where('b.user_id', '=', user.id)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('knowledge quota per user', () => {
  it('counts documents over all bases and refuses the upload that would pass it, saying what is used and allowed', async () => {
    const user = await createVerifiedUser(t);
    const first = await createBase(user, 'First');
    const second = await createBase(user, 'Second');
    expect((await upload(user, first, [txt('a'), txt('b')])).statusCode).toBe(200);
    expect((await upload(user, second, [txt('c')])).statusCode).toBe(200);

    const res = await upload(user, second, [txt('d'), txt('e')]);
    expect(res.statusCode).toBe(413);
    const body = res.json();
    expect(body.code).toBe('quota_exceeded');
    expect(body.message).toMatch(/documents: 3 used \+ 2 new > 4 allowed/);
    expect(body.used).toMatchObject({ documents: 3, chunks: 3 });
    expect(body.allowed).toEqual({ documents: 4, chunks: 40, bytes: 1024 * 1024 });
    expect(body.adding).toMatchObject({ documents: 2, chunks: 2 });
    expect(await documentCount(user)).toBe(3);

    // One more fits; the quota is the user's, so another user is not affected.
    expect((await upload(user, second, [txt('d')])).statusCode).toBe(200);
    const other = await createVerifiedUser(t);
    expect((await upload(other, await createBase(other), [txt('x'), txt('y'), txt('z')])).statusCode).toBe(200);
  });

  it('counts chunks and bytes', async () => {
    const user = await createVerifiedUser(t);
    const id = await createBase(user);
    // ~60 chunks of ~1,000 characters: past 40 chunks.
    const many = await upload(user, id, [txt('long', 'Beavers build dams from branches and mud. '.repeat(1500))]);
    expect(many.statusCode).toBe(413);
    expect(many.json()).toMatchObject({ code: 'quota_exceeded', used: { chunks: 0 }, allowed: { chunks: 40 } });
    expect(many.json().message).toMatch(/chunks: 0 used \+ \d+ new > 40 allowed/);
    // Two files of 600 KB each (1 chunk each once spaces are collapsed): past 1 MB.
    expect((await upload(user, id, [txt('small')])).statusCode).toBe(200);
    const bytes = await upload(user, id, [
      { filename: 'a.txt', content: `Beavers.${' '.repeat(600 * 1024)}Dams.` },
      { filename: 'b.txt', content: `Otters.${' '.repeat(600 * 1024)}Rocks.` },
    ]);
    expect(bytes.statusCode).toBe(413);
    expect(bytes.json().message).toMatch(/bytes: \d+ used \+ \d+ new > 1048576 allowed/);
    expect(await documentCount(user)).toBe(1);
  });

  it('lets only one of two simultaneous uploads through when both together would pass the quota', async () => {
    const user = await createVerifiedUser(t);
    const id = await createBase(user);
    const results = await Promise.all([
      upload(user, id, [txt('p1'), txt('p2'), txt('p3')]),
      upload(user, id, [txt('q1'), txt('q2'), txt('q3')]),
    ]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 413]);
    expect(await documentCount(user)).toBe(3);
  });

  it('counts crawled links: a batch that would pass the quota is skipped with the reason, and a user at the quota is refused', async () => {
    const user = await createVerifiedUser(t);
    const id = await createBase(user);
    expect((await upload(user, id, [txt('a')])).statusCode).toBe(200);
    // 1 used + a batch of 5 pages > 4: the batch is skipped, each link with the quota as its reason.
    const crawl = await links(
      user,
      id,
      [1, 2, 3, 4, 5].map((n) => `${origin}/${n}`),
    );
    expect(crawl.statusCode).toBe(200);
    expect(crawl.json().documents).toEqual([]);
    expect(crawl.json().skipped).toHaveLength(5);
    for (const skipped of crawl.json().skipped)
      expect(skipped.reason).toMatch(/knowledge storage quota exceeded \(documents: 1 used \+ 5 new > 4 allowed\)/);

    // Three pages fit.
    const fits = await links(user, id, [`${origin}/6`, `${origin}/7`, `${origin}/8`]);
    expect(fits.json().documents).toHaveLength(3);
    expect(await documentCount(user)).toBe(4);

    // At the quota: refused before anything is downloaded.
    const refused = await links(user, id, [`${origin}/9`]);
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({ code: 'quota_exceeded', used: { documents: 4 }, allowed: { documents: 4 } });
  });
});
