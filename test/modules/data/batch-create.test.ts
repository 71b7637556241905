// ObjectService.createChildrenFromBytes: the service's own bulk writer
// (connector ingestion). Many children of one parent in one transaction (one
// statement on PostgreSQL), one object_created event each, all or nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client, createKey, createObject, eventsOf } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const item = (size = 20) => ({ content: randomBytes(size), authTag: randomBytes(16), iv: randomBytes(12) });

describe('createChildrenFromBytes', () => {
  it('creates every child under the parent with its key, in order, and one object_created per child', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const items = Array.from({ length: 1203 }, (_, i) => item(10 + (i % 7)));
    const before = (await eventsOf(t, user.id, 'object_created')).length;
    const views = await t.services.data.objects.createChildrenFromBytes(
      user.id,
      { keyId, relatedId: parent.id },
      items,
    );
    expect(views).toHaveLength(1203);
    expect(new Set(views.map((v) => v.id)).size).toBe(1203);
    // Two pages (at most 1000 children each): follow X-Next-After.
    const first = await api.get(`/api/objects/${parent.id}/related`);
    const second = await api.get(`/api/objects/${parent.id}/related?after=${first.headers['x-next-after']}`);
    expect(second.headers['x-next-after']).toBeUndefined();
    const listed = [...first.json(), ...second.json()] as Array<{
      id: string;
      content: string;
      auth_tag: string;
      iv: string;
      keyId: string;
      version: number;
    }>;
    expect(listed.map((o) => o.id).sort()).toEqual(views.map((v) => v.id).sort());
    const byId = new Map(listed.map((o) => [o.id, o]));
    views.forEach((view, i) => {
      const stored = byId.get(view.id)!;
      expect(stored).toMatchObject({
        keyId,
        version: 1,
        content: items[i].content.toString('hex'),
        auth_tag: items[i].authTag.toString('hex'),
        iv: items[i].iv.toString('hex'),
      });
    });
    const events = (await eventsOf(t, user.id, 'object_created')).slice(before);
    expect(events.map((e) => e.payload.id)).toEqual(views.map((v) => v.id));
    expect(events[0].payload).toEqual({
      id: views[0].id,
      key_id: keyId,
      related_object_id: parent.id,
      content: views[0].content,
      auth_tag: views[0].auth_tag,
      iv: views[0].iv,
      metadata: { size: items[0].content.length, kind: 'object' },
    });
  });

  it("writes nothing when the key is not the user's or the parent is unknown or another user's", async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const otherKey = await createKey(client(t, other));
    const parent = await createObject(api, keyId);
    const otherParent = await createObject(client(t, other), otherKey);
    const before = (await eventsOf(t, user.id)).length;
    const write = (p: { keyId: string; relatedId: string }) =>
      t.services.data.objects.createChildrenFromBytes(user.id, p, [item(), item()]);
    await expect(write({ keyId: otherKey, relatedId: parent.id })).rejects.toMatchObject({ code: 'invalid_key' });
    await expect(write({ keyId, relatedId: 'no-such-object' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(write({ keyId, relatedId: otherParent.id })).rejects.toMatchObject({ code: 'not_found' });
    expect((await api.get(`/api/objects/${parent.id}/related`)).json()).toHaveLength(0);
    expect(await eventsOf(t, user.id)).toHaveLength(before);
  });

  it('refuses the whole batch when one item breaks the object rules, and an empty batch writes nothing', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const bad = { ...item(), authTag: randomBytes(8) };
    await expect(
      t.services.data.objects.createChildrenFromBytes(user.id, { keyId, relatedId: parent.id }, [item(), bad]),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect(await t.services.data.objects.createChildrenFromBytes(user.id, { keyId, relatedId: parent.id }, [])).toEqual(
      [],
    );
    expect((await api.get(`/api/objects/${parent.id}/related`)).json()).toHaveLength(0);
  });

  it('runs beside single creates of the same parent without losing either', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const [batch, ...singles] = await Promise.all([
      t.services.data.objects.createChildrenFromBytes(
        user.id,
        { keyId, relatedId: parent.id },
        Array.from({ length: 50 }, () => item()),
      ),
      ...Array.from({ length: 10 }, () => createObject(api, keyId, { relatedId: parent.id })),
    ]);
    expect(batch).toHaveLength(50);
    expect(singles).toHaveLength(10);
    expect((await api.get(`/api/objects/${parent.id}/related`)).json()).toHaveLength(60);
  });
});
