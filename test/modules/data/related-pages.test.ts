// GET /api/objects/{id}/related without a limit used to load every child and
// its ciphertext into one answer (1,000 children of 8 MiB: 16 GB of JSON).
// Now a page holds at most 1000 children and about RELATED_PAGE_BYTES, and
// X-Next-After / Link rel="next" say where the next page starts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type Client, client, createKey, createObject } from './support.js';

const PAGE_BYTES = 1024 * 1024;
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { relatedPageBytes: PAGE_BYTES } });
});
afterAll(() => t.close());

/** Creates `count` children of `bytes` ciphertext each through the service's batch write; returns their ids in order. */
async function children(
  userId: string,
  keyId: string,
  parentId: string,
  count: number,
  bytes: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 200) {
    t.clock.advance(1000);
    const items = Array.from({ length: Math.min(200, count - done) }, () => ({
      content: randomBytes(bytes),
      authTag: randomBytes(16),
      iv: randomBytes(12),
    }));
    const created = await t.services.data.objects.createChildrenFromBytes(
      userId,
      { keyId, relatedId: parentId },
      items,
    );
    ids.push(...created.map((o) => o.id));
  }
  return ids;
}

/** Follows X-Next-After to the end; returns every page's ids. */
async function allPages(api: Client, parentId: string, query = '') {
  const pages: string[][] = [];
  let url = `/api/objects/${parentId}/related${query ? `?${query}` : ''}`;
  for (;;) {
    const res = await api.get(url);
    expect(res.statusCode, res.body).toBe(200);
    pages.push(res.json().map((o: { id: string }) => o.id));
    const next = res.headers['x-next-after'] as string | undefined;
    if (!next) {
      expect(res.headers.link).toBeUndefined();
      return pages;
    }
    expect(res.headers.link).toContain(`after=${next}`);
    expect(res.headers.link).toMatch(/; rel="next"$/);
    url = `/api/objects/${parentId}/related?${new URLSearchParams({ ...(query ? Object.fromEntries(new URLSearchParams(query)) : {}), after: next })}`;
  }
}

describe('GET /api/objects/{id}/related pages', () => {
  it('answers at most 1000 children when limit is omitted, with the cursor of the next page', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const ids = await children(user.id, keyId, parent.id, 1050, 16);

    const first = await api.get(`/api/objects/${parent.id}/related`);
    expect(first.json()).toHaveLength(1000);
    expect(first.headers['x-next-after']).toBe(ids[999]);
    expect(first.headers.link).toBe(`</api/objects/${parent.id}/related?after=${ids[999]}>; rel="next"`);
    const second = await api.get(`/api/objects/${parent.id}/related?after=${ids[999]}`);
    expect(second.json().map((o: { id: string }) => o.id)).toEqual(ids.slice(1000));
    expect(second.headers['x-next-after']).toBeUndefined();

    // With a limit the cursor keeps it.
    const limited = await api.get(`/api/objects/${parent.id}/related?limit=400`);
    expect(limited.json()).toHaveLength(400);
    expect(limited.headers.link).toBe(`</api/objects/${parent.id}/related?after=${ids[399]}&limit=400>; rel="next"`);
    // A page that ends exactly at the last child says there is nothing more.
    const exact = await api.get(`/api/objects/${parent.id}/related?limit=50&after=${ids[999]}`);
    expect(exact.json()).toHaveLength(50);
    expect(exact.headers['x-next-after']).toBeUndefined();
  });

  it('stops a page at the byte budget, never loading the ciphertext of the children beyond it', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    // 400 KiB each: hex makes ~800 KiB of JSON, so one child per 1 MiB page.
    const ids = await children(user.id, keyId, parent.id, 5, 400 * 1024);
    const read = vi.spyOn(t.services.data.objects['store'].objects, 'findManyById');
    const first = await api.get(`/api/objects/${parent.id}/related`);
    expect(first.json().map((o: { id: string }) => o.id)).toEqual([ids[0]]);
    expect(first.json()[0].content).toHaveLength(2 * 400 * 1024);
    expect(read).toHaveBeenCalledTimes(1);
    expect(read.mock.calls[0][0]).toEqual([ids[0]]);
    read.mockRestore();
    expect(first.headers['x-next-after']).toBe(ids[0]);
    const pages = await allPages(api, parent.id);
    expect(pages).toEqual(ids.map((id) => [id]));
  });

  it('still answers a single child larger than the whole budget (one per page), and fills pages with small ones', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const huge = await children(user.id, keyId, parent.id, 2, 600 * 1024);
    const small = await children(user.id, keyId, parent.id, 30, 1024);
    const pages = await allPages(api, parent.id);
    expect(pages.flat()).toEqual([...huge, ...small]);
    expect(pages[0]).toEqual([huge[0]]);
    expect(pages[1]).toEqual([huge[1]]);
    // 30 small children (~2.4 KB of JSON each) fit in one 1 MiB page.
    expect(pages.slice(2)).toEqual([small]);
  });
});

describe('ObjectService.childIds (what a call view reads to find its recording parts)', () => {
  it('lists every child id in creation order across its 1000-row pages, at most `most`, never reading ciphertext', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const ids = await children(user.id, keyId, parent.id, 1050, 16);
    const read = vi.spyOn(t.services.data.objects['store'].objects, 'findManyById');
    expect(await t.services.data.objects.childIds(user.id, parent.id)).toEqual(ids);
    expect(await t.services.data.objects.childIds(user.id, parent.id, 1)).toEqual([ids[0]]);
    expect(await t.services.data.objects.childIds(user.id, parent.id, 1000)).toEqual(ids.slice(0, 1000));
    expect(read).not.toHaveBeenCalled();
    read.mockRestore();
  });

  it("is 404 for another user's object, and empty for an object without children", async () => {
    const owner = await createVerifiedUser(t);
    const api = client(t, owner);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const stranger = await createVerifiedUser(t);
    await expect(t.services.data.objects.childIds(stranger.id, parent.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(await t.services.data.objects.childIds(owner.id, parent.id)).toEqual([]);
  });
});
