import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { ISO, client, createKey, createObject, eventsOf } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('publish', () => {
  it('publishes, replaces, unpublishes (ciphertext kept) and records the events', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const first = await createObject(api, keyId);
    const second = await createObject(api, keyId);

    const res = await api.put('/api/objects/publish/calls/call-42', { objectId: first.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      type: 'calls',
      relatedId: 'call-42',
      objectId: first.id,
      publishedAt: expect.stringMatching(ISO),
    });
    expect(await t.services.data.publish.findPublished(user.id, 'calls', 'call-42')).toMatchObject({
      objectId: first.id,
    });

    const replaced = await api.put('/api/objects/publish/calls/call-42', { objectId: second.id });
    expect(replaced.json().objectId).toBe(second.id);
    expect(await t.services.data.publish.findPublished(user.id, 'calls', 'call-42')).toMatchObject({
      objectId: second.id,
    });

    const un = await api.del('/api/objects/publish/calls/call-42');
    expect(un.statusCode).toBe(204);
    expect(await t.services.data.publish.findPublished(user.id, 'calls', 'call-42')).toBeNull();
    expect((await api.get(`/api/objects/${second.id}`)).statusCode).toBe(200);
    const again = await api.del('/api/objects/publish/calls/call-42');
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('not_found');

    const events = (await eventsOf(t, user.id)).filter((e) => e.type === 'publish' || e.type === 'unpublish');
    expect(events).toEqual([
      {
        type: 'publish',
        payload: { type: 'calls', related_id: 'call-42', object_id: first.id, timestamp: expect.stringMatching(ISO) },
      },
      {
        type: 'publish',
        payload: { type: 'calls', related_id: 'call-42', object_id: second.id, timestamp: expect.stringMatching(ISO) },
      },
      {
        type: 'unpublish',
        payload: { type: 'calls', related_id: 'call-42', object_id: second.id, timestamp: expect.stringMatching(ISO) },
      },
    ]);
  });

  it('accepts any relatedId text up to 200 characters, URL-encoded', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const object = await createObject(api, await createKey(api));
    const relatedId = 'a b/c?d';
    const res = await api.put(`/api/objects/publish/contacts/${encodeURIComponent(relatedId)}`, {
      objectId: object.id,
    });
    expect(res.json().relatedId).toBe(relatedId);
    expect((await api.del(`/api/objects/publish/contacts/${encodeURIComponent(relatedId)}`)).statusCode).toBe(204);
    expect(
      (await api.put(`/api/objects/publish/contacts/${'x'.repeat(201)}`, { objectId: object.id })).statusCode,
    ).toBe(400);
  });

  it('refuses a bad type with 400 and an unknown object with 404', async () => {
    const api = client(t, await createVerifiedUser(t));
    const object = await createObject(api, await createKey(api));
    for (const type of ['Calls', 'a.b', 'x'.repeat(65)]) {
      const res = await api.put(`/api/objects/publish/${type}/r`, { objectId: object.id });
      expect(res.statusCode, type).toBe(400);
    }
    expect((await api.put('/api/objects/publish/calls/r', {})).statusCode).toBe(400);
    const unknown = await api.put('/api/objects/publish/calls/r', { objectId: 'nope' });
    expect(unknown.statusCode).toBe(404);
  });
});
