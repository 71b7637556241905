import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { ISO, client, createKey, createObject, eventsOf, sampleObject } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const tag = () => randomBytes(16).toString('base64');

describe('PUT and GET /api/objects', () => {
  it('takes base64, answers hex with version 1 and an ETag, and records object_created', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const content = Buffer.from('ciphertext bytes');
    const authTag = randomBytes(16);
    const iv = randomBytes(12);
    const res = await api.put('/api/objects', {
      keyId,
      content: content.toString('base64'),
      authTag: authTag.toString('base64'),
      iv: iv.toString('base64'),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"1"');
    const object = res.json();
    expect(object).toEqual({
      id: expect.any(String),
      keyId,
      relatedId: null,
      content: content.toString('hex'),
      auth_tag: authTag.toString('hex'),
      iv: iv.toString('hex'),
      version: 1,
      metadata: { size: content.length, kind: 'object' },
      createdAt: expect.stringMatching(ISO),
      updatedAt: object.createdAt,
    });
    const got = await api.get(`/api/objects/${object.id}`);
    expect(got.json()).toEqual(object);
    expect(got.headers.etag).toBe('"1"');

    const [event] = await eventsOf(t, user.id, 'object_created');
    expect(event.payload).toEqual({
      id: object.id,
      key_id: keyId,
      content: content.toString('hex'),
      auth_tag: authTag.toString('hex'),
      iv: iv.toString('hex'),
      metadata: { size: content.length, kind: 'object' },
    });
  });

  it('stores the ciphertext as bytes', async () => {
    const api = client(t, await createVerifiedUser(t));
    const body = sampleObject(await createKey(api));
    const { id } = (await api.put('/api/objects', body)).json();
    const row = await t.database.db
      .selectFrom('objects')
      .select(['content', 'auth_tag'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(row.content)).toBe(true);
    expect(Buffer.from(row.content).toString('base64')).toBe(body.content);
  });

  it('accepts an object without iv and with empty content', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.put('/api/objects', { keyId: await createKey(api), content: '', authTag: tag() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ content: '', iv: null, metadata: { size: 0 } });
  });

  it('refuses anything but strict base64, a 16-byte tag and a 12-byte iv with 400', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ content: 'not base64!' }, /content must be standard base64/],
      [{ content: 'QUJD\nREVG' }, /content/],
      [{ content: 'QUJDRA' }, /content/], // missing padding
      [{ content: 'QUJDRA=' }, /content/],
      [{ content: 'QR==' }, /content is not canonical/], // non-zero padding bits
      [{ content: '-_-_' }, /content/], // base64url alphabet
      [{ content: '====' }, /content/],
      [{ authTag: randomBytes(15).toString('base64') }, /authTag must be 16 bytes/],
      [{ authTag: randomBytes(17).toString('base64') }, /authTag must be 16 bytes/],
      [{ authTag: 'zz' }, /authTag/],
      [{ iv: randomBytes(11).toString('base64') }, /iv must be 12 bytes/],
      [{ iv: 'abc' }, /iv/],
      [{ content: 5 }, /content/],
      [{ keyId: undefined }, /keyId/],
    ];
    for (const [override, message] of cases) {
      const body = { ...sampleObject(keyId), ...override };
      const res = await api.put('/api/objects', body);
      expect(res.statusCode, JSON.stringify(override)).toBe(400);
      expect(res.json().message).toMatch(message);
    }
    expect(await t.database.db.selectFrom('objects').select('id').where('key_id', '=', keyId).execute()).toHaveLength(
      0,
    );
  });

  it('answers 400 invalid_key for an unknown keyId and 404 for an unknown relatedId, writing neither object nor event', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const badKey = await api.put('/api/objects', sampleObject('no-such-key'));
    expect(badKey.statusCode).toBe(400);
    expect(badKey.json().code).toBe('invalid_key');
    const badParent = await api.put(
      '/api/objects',
      sampleObject(await createKey(api), { relatedId: 'no-such-object' }),
    );
    expect(badParent.statusCode).toBe(404);
    expect(badParent.json().code).toBe('not_found');
    expect((await api.get('/api/objects/no-such-object')).statusCode).toBe(404);
    const written = (table: 'objects' | 'events') =>
      t.database.db
        .selectFrom(table)
        .select('user_id')
        .where('user_id', '=', user.id)
        .where(table === 'objects' ? 'kind' : 'type', '=', table === 'objects' ? 'object' : 'object_created')
        .execute();
    expect(await written('objects')).toHaveLength(0);
    expect(await written('events')).toHaveLength(0);
  });
});

describe('PATCH /api/objects/{id}', () => {
  it('replaces the ciphertext, bumps the version and records object_updated', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const otherKey = await createKey(api);
    const object = await createObject(api, keyId);
    const replacement = sampleObject(otherKey);
    const res = await api.patch(`/api/objects/${object.id}`, replacement, { 'if-match': '"1"' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"2"');
    expect(res.json()).toMatchObject({
      id: object.id,
      keyId: otherKey,
      version: 2,
      content: Buffer.from(replacement.content, 'base64').toString('hex'),
      iv: Buffer.from(replacement.iv, 'base64').toString('hex'),
    });
    expect((await api.get(`/api/objects/${object.id}`)).json().version).toBe(2);
    const [event] = await eventsOf(t, user.id, 'object_updated');
    expect(event.payload).toEqual({
      object_id: object.id,
      key_id: otherKey,
      updated_at: expect.stringMatching(ISO),
      version: 2,
    });
  });

  it('answers 412 version_mismatch on a stale If-Match and leaves the object unchanged', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    expect((await api.patch(`/api/objects/${object.id}`, sampleObject(keyId), { 'if-match': '1' })).statusCode).toBe(
      200,
    );
    const before = (await api.get(`/api/objects/${object.id}`)).json();
    for (const ifMatch of ['"1"', '1', 'W/"2"', '"abc"', '"1", "3"']) {
      const stale = await api.patch(`/api/objects/${object.id}`, sampleObject(keyId), { 'if-match': ifMatch });
      expect(stale.statusCode, ifMatch).toBe(412);
      expect(stale.json()).toMatchObject({ code: 'version_mismatch', version: 2 });
    }
    expect((await api.get(`/api/objects/${object.id}`)).json()).toEqual(before);
    expect(
      (await api.patch(`/api/objects/${object.id}`, sampleObject(keyId), { 'if-match': '"1", "2"' })).statusCode,
    ).toBe(200);
    expect(
      (await api.patch(`/api/objects/${object.id}`, sampleObject(keyId), { 'if-match': '*' })).json().version,
    ).toBe(4);
  });

  it('replaces unconditionally without If-Match, still bumping the version', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    await api.patch(`/api/objects/${object.id}`, sampleObject(keyId));
    const res = await api.patch(`/api/objects/${object.id}`, { keyId, content: 'AAAA', authTag: tag() });
    expect(res.json()).toMatchObject({ version: 3, content: '000000', iv: null });
  });

  it('keeps the parent when relatedId is omitted, detaches on null, re-parents on an id', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const a = await createObject(api, keyId);
    const b = await createObject(api, keyId);
    const child = await createObject(api, keyId, { relatedId: a.id });
    expect((await api.patch(`/api/objects/${child.id}`, sampleObject(keyId))).json().relatedId).toBe(a.id);
    expect(
      (await api.patch(`/api/objects/${child.id}`, sampleObject(keyId, { relatedId: b.id }))).json().relatedId,
    ).toBe(b.id);
    expect((await api.get(`/api/objects/${a.id}/related`)).json()).toEqual([]);
    expect(
      (await api.patch(`/api/objects/${child.id}`, sampleObject(keyId, { relatedId: null }))).json().relatedId,
    ).toBeNull();
    const missing = await api.patch(`/api/objects/${child.id}`, sampleObject(keyId, { relatedId: 'nope' }));
    expect(missing.statusCode).toBe(404);
  });

  it('refuses a relatedId that would create a cycle', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const a = await createObject(api, keyId);
    const b = await createObject(api, keyId, { relatedId: a.id });
    const c = await createObject(api, keyId, { relatedId: b.id });
    for (const [id, parent] of [
      [a.id, c.id],
      [a.id, b.id],
      [a.id, a.id],
      [b.id, c.id],
    ]) {
      const res = await api.patch(`/api/objects/${id}`, sampleObject(keyId, { relatedId: parent }));
      expect(res.statusCode, `${id} -> ${parent}`).toBe(400);
      expect(res.json().message).toMatch(/ancestor/);
    }
    expect((await api.get(`/api/objects/${a.id}`)).json()).toMatchObject({ relatedId: null, version: 1 });
    expect((await api.patch(`/api/objects/${c.id}`, sampleObject(keyId, { relatedId: a.id }))).statusCode).toBe(200);
  });

  it('answers 400 invalid_key for a deleted key and 404 for an unknown object', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    const res = await api.patch(`/api/objects/${object.id}`, sampleObject('gone'));
    expect(res.json().code).toBe('invalid_key');
    expect((await api.patch('/api/objects/nope', sampleObject(keyId))).statusCode).toBe(404);
  });
});

describe('GET /api/objects/{id}/related', () => {
  it('lists children oldest first, hex-encoded, with optional paging', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      t.clock.advance(1000);
      ids.push((await createObject(api, keyId, { relatedId: parent.id })).id);
    }
    await createObject(api, keyId); // not a child
    const all = (await api.get(`/api/objects/${parent.id}/related`)).json();
    expect(all.map((o: any) => o.id)).toEqual(ids);
    expect(all[0]).toEqual((await api.get(`/api/objects/${ids[0]}`)).json());
    const page1 = (await api.get(`/api/objects/${parent.id}/related?limit=2`)).json();
    const page2 = (await api.get(`/api/objects/${parent.id}/related?limit=2&after=${page1[1].id}`)).json();
    expect([...page1, ...page2].map((o: any) => o.id)).toEqual(ids.slice(0, 4));
    expect((await api.get(`/api/objects/${parent.id}/related?after=${parent.id}`)).statusCode).toBe(400);
    expect((await api.get(`/api/objects/${parent.id}/related?limit=0`)).statusCode).toBe(400);
    expect((await api.get('/api/objects/nope/related')).statusCode).toBe(404);
  });
});

describe('DELETE /api/objects/{id}', () => {
  it('removes the object and its publications, detaches its children, and records the events', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const grandparent = await createObject(api, keyId);
    const object = await createObject(api, keyId, { relatedId: grandparent.id });
    const child = await createObject(api, keyId, { relatedId: object.id });
    expect((await api.put(`/api/objects/publish/calls/c-1`, { objectId: object.id })).statusCode).toBe(200);

    const res = await api.del(`/api/objects/${object.id}`);
    expect(res.statusCode).toBe(204);
    expect((await api.get(`/api/objects/${object.id}`)).statusCode).toBe(404);
    expect((await api.del(`/api/objects/${object.id}`)).statusCode).toBe(404);
    expect((await api.get(`/api/objects/${child.id}`)).json()).toMatchObject({ relatedId: null, version: 2 });
    expect((await api.get(`/api/objects/${grandparent.id}/related`)).json()).toEqual([]);
    expect((await api.del('/api/objects/publish/calls/c-1')).statusCode).toBe(404);

    const events = (await eventsOf(t, user.id)).filter((e) =>
      ['unpublish', 'object_updated', 'object_deleted'].includes(e.type),
    );
    expect(events).toEqual([
      {
        type: 'unpublish',
        payload: { type: 'calls', related_id: 'c-1', object_id: object.id, timestamp: expect.stringMatching(ISO) },
      },
      {
        type: 'object_updated',
        payload: { object_id: child.id, key_id: keyId, updated_at: expect.stringMatching(ISO), version: 2 },
      },
      { type: 'object_deleted', payload: { object_id: object.id, deleted_at: expect.stringMatching(ISO) } },
    ]);
  });
});
