// The in-memory search index (search-index.ts) and its cache (search-cache.ts):
// ranking, and staying in step with the database when another instance
// writes (two apps on one database, SQLite or PostgreSQL), deletes, or when
// the memory limit sends a base to the database's full-text index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SearchIndexCache } from '../../../src/modules/knowledge/search-cache.js';
import { type IndexedChunk, SearchIndex, indexTerms } from '../../../src/modules/knowledge/search-index.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type FormFile, multipartForm } from '../../support/multipart.js';

describe('SearchIndex', () => {
  const index = new SearchIndex();
  index.add({
    id: 1,
    title: 'Billing guide',
    text: 'Invoices are sent on the first day of the month. Refunds take five days.',
  });
  index.add({ id: 2, title: 'Shipping', text: 'Parcels ship from Berlin. Refunds for lost parcels are automatic.' });
  index.add({
    id: 3,
    title: 'Café menu',
    text: 'The café serves espresso, crème brûlée and tea every day of the month.',
  });
  index.add({ id: 4, title: 'Refunds', text: 'How refunds work.' });

  it('stems, folds diacritics and drops stopwords, in documents and questions alike', () => {
    expect(indexTerms('The Cafés were Running')).toEqual(['cafe', 'run']);
    expect(index.search('creme brulee at the cafe', 5)[0]).toBe(3);
    expect(index.search('invoicing', 5)).toEqual([1]);
  });

  it('ranks rarer terms and the document name higher; any term may match', () => {
    // "refunds" is in three chunks and the title of one: that one first.
    const refunds = index.search('refund', 5);
    expect(refunds[0]).toBe(4);
    expect([...refunds].sort()).toEqual([1, 2, 4]);
    // "parcels" is rare: the shipping chunk wins over chunks holding only the common word.
    expect(index.search('refund lost parcels', 5)[0]).toBe(2);
    expect(index.search('month', 1)).toHaveLength(1);
    expect(index.search('zebra', 5)).toEqual([]);
    expect(index.search('the of and', 5)).toEqual([]);
  });

  it('answers the same after many searches (its score buffer is cleared between searches)', () => {
    const first = index.search('refund lost parcels month', 5);
    for (let i = 0; i < 50; i++) index.search(i % 2 ? 'espresso tea' : 'invoices first day', 5);
    expect(index.search('refund lost parcels month', 5)).toEqual(first);
  });

  it('keeps the best `limit` in order, ties by lower id', () => {
    const ties = new SearchIndex();
    for (let id = 10; id > 0; id--) ties.add({ id, title: 'same', text: 'identical words here' });
    expect(ties.search('identical', 3)).toEqual([1, 2, 3]);
  });
});

describe('building an index', () => {
  const words = [
    'invoice',
    'parcel',
    'refund',
    'espresso',
    'berlin',
    'monthly',
    'shipping',
    'menu',
    'guide',
    'automatic',
  ];
  const chunks: IndexedChunk[] = Array.from({ length: 1500 }, (_, i) => ({
    id: i + 1,
    title: `Document ${i}`,
    text: Array.from({ length: 150 }, (_, w) => `${words[(i * 7 + w) % words.length]}${w % 13}`).join(' '),
  }));
  // Every chunk in one page, answered at once: the build itself is the only place that can yield.
  const source = {
    chunksAfter: async (_base: string, afterId: number, limit: number) =>
      chunks.filter((c) => c.id > afterId).slice(0, limit),
    countChunks: async () => chunks.length,
  };

  it('gives the event loop turns while it indexes, and answers as an index built in one go', async () => {
    const cache = new SearchIndexCache(source, 256 * 1024 * 1024);
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const built = await cache.indexFor('base', 1);
    ticking = false;
    const turnsDuringBuild = turns;
    // 1,500 chunks of 150 words are far more than one 10 ms slice of indexing on any machine.
    expect(turnsDuringBuild).toBeGreaterThan(1);
    const direct = new SearchIndex();
    for (const chunk of chunks) direct.add(chunk);
    expect(built!.size).toBe(chunks.length);
    for (const query of ['refund3 parcel7', 'espresso12 berlin0 menu5', 'automatic9'])
      expect(built!.search(query, 10)).toEqual(direct.search(query, 10));
  });
});

describe('search indexes across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ shareDatabaseWith: a, clock: a.clock });
    user = await createVerifiedUser(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const upload = (app: TestApp, id: string, files: FormFile[]) => {
    const form = multipartForm(files);
    return app.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}`,
      headers: { ...bearer(user.token), ...form.headers },
      payload: form.payload,
    });
  };
  const search = async (app: TestApp, id: string, text: string) => {
    const res = await app.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${id}/search`,
      headers: bearer(user.token),
      payload: { text },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as Array<{ text: string; document: { id: number; name: string } }>).map((m) => m.document.name);
  };

  it("sees another instance's uploads and deletions at the next search", async () => {
    const id = (
      await a.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'Shared' },
      })
    ).json().id as string;
    expect(
      (await upload(a, id, [{ filename: 'otters.txt', content: 'Otters hold hands while they sleep.' }])).statusCode,
    ).toBe(200);
    // B builds its index from the database.
    expect(await search(b, id, 'otters sleep')).toEqual(['otters.txt']);
    // A adds a document: B's index is behind by one version and catches up (appended chunks).
    const added = await upload(a, id, [{ filename: 'badgers.txt', content: 'Badgers dig setts with many tunnels.' }]);
    const badgersId = added.json()[0].id as number;
    expect(await search(b, id, 'badgers tunnels')).toEqual(['badgers.txt']);
    // A deletes it: B never answers its passage again (rebuilt).
    expect(
      (
        await a.app.inject({
          method: 'DELETE',
          url: `/api/knowledge-bases/${id}/${badgersId}`,
          headers: bearer(user.token),
        })
      ).statusCode,
    ).toBe(204);
    expect(await search(b, id, 'badgers tunnels')).toEqual([]);
    expect(await search(b, id, 'otters')).toEqual(['otters.txt']);
    // A deletes the base: B answers 404.
    expect(
      (await a.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${id}`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(204);
    expect(
      (
        await b.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${id}/search`,
          headers: bearer(user.token),
          payload: { text: 'otters' },
        })
      ).statusCode,
    ).toBe(404);
  });

  it("raises the base's version with every write of its chunks, in the same transaction", async () => {
    const id = (
      await a.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'Versions' },
      })
    ).json().id as string;
    const version = async () =>
      Number(
        (
          await a.database.db
            .selectFrom('knowledge_bases')
            .select('index_version')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).index_version,
      );
    expect(await version()).toBe(0);
    const doc = (await upload(a, id, [{ filename: 'one.txt', content: 'first' }])).json()[0].id as number;
    expect(await version()).toBe(1);
    await a.app.inject({ method: 'DELETE', url: `/api/knowledge-bases/${id}/${doc}`, headers: bearer(user.token) });
    expect(await version()).toBe(2);
    // A refused upload writes nothing and changes no version.
    const refused = await upload(a, id, [{ filename: 'bin.dat', content: Buffer.from([0, 1, 2, 3, 0, 0, 7]) }]);
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(await version()).toBe(2);
  });
});

describe('the memory limit', () => {
  let off: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    // KNOWLEDGE_SEARCH_CACHE_MB=0: every search ranks in the database.
    off = await createTestApp({ env: { KNOWLEDGE_SEARCH_CACHE_MB: '0' } });
    user = await createVerifiedUser(off);
  });
  afterAll(async () => {
    await off?.close();
  });

  it('searches through the database full-text index when the cache is off, with the same best answer', async () => {
    const id = (
      await off.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'No cache' },
      })
    ).json().id as string;
    const form = multipartForm([
      { filename: 'otters.txt', content: 'Otters hold hands while they sleep in the river.' },
      { filename: 'badgers.txt', content: 'Badgers dig setts with many tunnels under the river bank.' },
      { filename: 'herons.txt', content: 'Herons stand still in shallow water, waiting for fish.' },
    ]);
    expect(
      (
        await off.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${id}`,
          headers: { ...bearer(user.token), ...form.headers },
          payload: form.payload,
        })
      ).statusCode,
    ).toBe(200);
    const best = async (text: string) =>
      (
        await off.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${id}/search`,
          headers: bearer(user.token),
          payload: { text },
        })
      ).json()[0]?.document.name;
    const memory = new SearchIndex();
    const chunks = await off.database.db
      .selectFrom('knowledge_chunks')
      .select(['id', 'title', 'text'])
      .where('knowledge_base_id', '=', id)
      .orderBy('id')
      .execute();
    for (const c of chunks) memory.add(c);
    const names = new Map(chunks.map((c) => [c.id, c.title]));
    for (const question of ['where do otters sleep', 'tunnels under the bank', 'birds waiting for fish', 'river']) {
      expect(names.get(memory.search(question, 1)[0]!), question).toBe(await best(question));
    }
  });
});
