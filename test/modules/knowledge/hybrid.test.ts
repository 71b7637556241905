// Hybrid retrieval with the OpenAI-compatible embeddings provider pointed at
// a local fake (deterministic vectors in which synonyms meet): runs on SQLite
// (sqlite-vec) and on PostgreSQL (exact scan over real[]) alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type EmbeddingsFake, FAKE_DIMENSIONS, startEmbeddingsFake } from '../../support/embeddings-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { multipartForm } from '../../support/multipart.js';

let fake: EmbeddingsFake;
let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  fake = await startEmbeddingsFake();
  t = await createTestApp({
    env: { EMBEDDINGS_URL: fake.url, EMBEDDINGS_MODEL: 'fake-embed-1', EMBEDDINGS_API_KEY: 'sk-test' },
  });
  user = await createVerifiedUser(t);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function baseWith(files: Array<{ filename: string; content: string }>) {
  const id = (
    await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: 'hybrid' },
    })
  ).json().id;
  const form = multipartForm(files);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${id}`,
    headers: { ...bearer(user.token), ...form.headers },
    payload: form.payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  return id as string;
}
const search = async (id: string, text: string) =>
  (
    await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}/search`,
      headers: bearer(user.token),
      payload: { text },
    })
  ).json();

describe('hybrid search', () => {
  it('embeds every chunk on upload through the OpenAI-compatible API and stores unit vectors', async () => {
    const before = fake.requests.length;
    const id = await baseWith([
      { filename: 'garage.txt', content: 'Our garage repairs every car brand within two days.' },
    ]);
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ model: 'fake-embed-1', authorization: 'Bearer sk-test' });
    expect(sent[0].input[0]).toContain('repairs every car brand');
    const rows = await t.database.db
      .selectFrom('knowledge_chunks')
      .select('embedding')
      .where('knowledge_base_id', '=', id)
      .execute();
    const vector =
      t.database.dialect === 'sqlite'
        ? Array.from(new Float32Array(new Uint8Array(rows[0].embedding as Buffer).buffer))
        : (rows[0].embedding as number[]);
    expect(vector).toHaveLength(FAKE_DIMENSIONS);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
  });

  it('finds a passage by meaning that full-text search alone cannot match', async () => {
    const id = await baseWith([
      { filename: 'garage.txt', content: 'Our garage repairs every car brand within two days.' },
      { filename: 'clinic.txt', content: 'The clinic has a doctor on duty every night.' },
      { filename: 'bakery.txt', content: 'Fresh bread is baked before sunrise.' },
    ]);
    // "automobile" and "physician" appear in no document; the fake's vectors put them next to "car" and "doctor".
    const cars = await search(id, 'automobile');
    expect(cars[0].document.name).toBe('garage.txt');
    const doctors = await search(id, 'physician');
    expect(doctors[0].document.name).toBe('clinic.txt');
    // Both lists agree on a literal query: the fused score of the first match is 1.
    const bread = await search(id, 'bread sunrise');
    expect(bread[0]).toMatchObject({ score: 1, document: { name: 'bakery.txt' } });
    expect(bread.length).toBeLessThanOrEqual(3);
  });

  it('falls back to full-text results when the embeddings provider fails during a search', async () => {
    const id = await baseWith([
      { filename: 'garage.txt', content: 'Our garage repairs every car brand within two days.' },
    ]);
    fake.failNext(2);
    const before = fake.requests.length;
    const matches = await search(id, 'garage repairs');
    expect(matches[0].document.name).toBe('garage.txt');
    // Without vectors, a word no document holds finds nothing…
    expect(await search(id, 'automobile')).toEqual([]);
    expect(fake.requests.length).toBe(before + 2);
    // …and with the provider back, it finds the passage by meaning again.
    expect((await search(id, 'automobile'))[0].document.name).toBe('garage.txt');
  });

  it('refuses an upload with 502 and creates nothing when the provider fails', async () => {
    const id = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'x' },
      })
    ).json().id;
    fake.failNext(1);
    const form = multipartForm([{ filename: 'a.txt', content: 'Some text' }]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}`,
      headers: { ...bearer(user.token), ...form.headers },
      payload: form.payload,
    });
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('provider_error');
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) })).json()
        .documents,
    ).toEqual([]);
  });

  it('deleting a document removes its vectors', async () => {
    const id = await baseWith([
      { filename: 'garage.txt', content: 'Our garage repairs every car brand within two days.' },
      { filename: 'clinic.txt', content: 'The clinic has a doctor on duty every night.' },
    ]);
    const docs = (
      await t.app.inject({ method: 'GET', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) })
    ).json().documents;
    const garage = docs.find((d: { name: string }) => d.name === 'garage.txt').id;
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/knowledge-bases/${id}/${garage}`,
          headers: bearer(user.token),
        })
      ).statusCode,
    ).toBe(204);
    const matches = await search(id, 'automobile');
    expect(matches.map((m: { document: { name: string } }) => m.document.name)).not.toContain('garage.txt');
    const left = await t.database.db
      .selectFrom('knowledge_chunks')
      .select('document_id')
      .where('knowledge_base_id', '=', id)
      .execute();
    expect(left.map((r) => r.document_id)).not.toContain(garage);
  });
});
