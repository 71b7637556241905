import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import { ISO, client, eventsOf, sampleObject } from './support.js';

const STORES = [
  'contacts',
  'calls',
  'agents',
  'tasks',
  'conversational-pathways',
  'campaigns',
  'sms-messages',
  'performance-metrics',
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/root', () => {
  it('creates the root with the eight stores, their default keys and the current server', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const res = await api.get('/api/root');
    expect(res.statusCode).toBe(200);
    const root = res.json();
    expect(Object.keys(root.stores)).toEqual(STORES);
    expect(root.createdAt).toMatch(ISO);
    const server = (await api.get('/api/server')).json();
    expect(root.server).toEqual(server);

    const children = (await api.get(`/api/objects/${root.id}/related`)).json();
    expect(children.map((c: any) => c.metadata.store)).toEqual(STORES);
    for (const name of STORES) {
      const { id, keyId } = root.stores[name];
      const store = children.find((c: any) => c.id === id);
      expect(store).toMatchObject({
        relatedId: root.id,
        keyId,
        content: '',
        auth_tag: '',
        version: 1,
        metadata: { kind: 'store', store: name, size: 0 },
      });
      const key = (await api.get(`/api/keys/${keyId}`)).json();
      expect(key).toMatchObject({ id: keyId, server: server.current, deprecated: false });
      expect(key.key).toMatch(/^[0-9a-f]{64}$/);
    }
    const rootObject = (await api.get(`/api/objects/${root.id}`)).json();
    expect(rootObject).toMatchObject({ id: root.id, keyId: null, relatedId: null, metadata: { kind: 'root' } });
    expect(new Set(STORES.map((s) => root.stores[s].keyId)).size).toBe(8);
  });

  it('is idempotent and records its creation events once', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const first = (await api.get('/api/root')).json();
    const second = (await api.get('/api/root')).json();
    expect(second).toEqual(first);
    const keyEvents = await eventsOf(t, user.id, 'key_created');
    expect(keyEvents.map((e) => e.payload.key_id).sort()).toEqual(STORES.map((s) => first.stores[s].keyId).sort());
    expect(keyEvents[0].payload).toEqual({
      key_id: expect.any(String),
      user_id: user.id,
      created_at: expect.stringMatching(ISO),
    });
    const objectEvents = await eventsOf(t, user.id, 'object_created');
    expect(objectEvents).toHaveLength(9);
    expect(objectEvents.find((e) => e.payload.metadata.store === 'calls')?.payload).toMatchObject({
      id: first.stores.calls.id,
      key_id: first.stores.calls.keyId,
      related_object_id: first.id,
      content: '',
      auth_tag: '',
    });
  });

  it('creates exactly one root when first requests race', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.get('/api/root')));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
    expect(new Set(answers.map((a) => JSON.stringify(a.json().stores))).size).toBe(1);
    const db = t.database.db;
    expect(await db.selectFrom('objects').select('id').where('user_id', '=', user.id).execute()).toHaveLength(9);
    expect(await db.selectFrom('store_keys').select('id').where('user_id', '=', user.id).execute()).toHaveLength(8);
    expect(await eventsOf(t, user.id, 'key_created')).toHaveLength(8);
  });

  it('refuses to delete or replace the root and store containers, and to delete a default key (409)', async () => {
    const api = client(t, await createVerifiedUser(t));
    const root = (await api.get('/api/root')).json();
    for (const id of [root.id, root.stores.contacts.id]) {
      const del = await api.del(`/api/objects/${id}`);
      expect(del.statusCode).toBe(409);
      expect(del.json().code).toBe('conflict');
      const patch = await api.patch(`/api/objects/${id}`, sampleObject(root.stores.contacts.keyId));
      expect(patch.statusCode).toBe(409);
    }
    const delKey = await api.del(`/api/keys/${root.stores.contacts.keyId}`);
    expect(delKey.statusCode).toBe(409);
    expect((await api.get(`/api/keys/${root.stores.contacts.keyId}`)).statusCode).toBe(200);
  });

  it('stores records as children of a store container', async () => {
    const api = client(t, await createVerifiedUser(t));
    const { stores } = (await api.get('/api/root')).json();
    const created = await api.put(
      '/api/objects',
      sampleObject(stores.contacts.keyId, { relatedId: stores.contacts.id }),
    );
    expect(created.statusCode).toBe(200);
    const list = (await api.get(`/api/objects/${stores.contacts.id}/related`)).json();
    expect(list.map((o: any) => o.id)).toEqual([created.json().id]);
  });
});

describe('data-plane authentication', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/api/root'],
    ['GET', '/api/server'],
    ['GET', '/api/servers'],
    ['POST', '/api/servers', { name: 'x', mode: 'generate' }],
    ['PUT', '/api/keys', { server: 'workspace-1' }],
    ['GET', '/api/keys/k1'],
    ['DELETE', '/api/keys/k1'],
    ['PUT', '/api/objects', { keyId: 'k', content: '', authTag: '' }],
    ['GET', '/api/objects/o1'],
    ['PATCH', '/api/objects/o1', { keyId: 'k', content: '', authTag: '' }],
    ['DELETE', '/api/objects/o1'],
    ['GET', '/api/objects/o1/related'],
    ['PUT', '/api/objects/publish/calls/r1', { objectId: 'o1' }],
    ['DELETE', '/api/objects/publish/calls/r1'],
  ];

  it('answers 403 phone_not_verified to an unverified user on every route', async () => {
    const user = await registerUser(t);
    for (const [method, url, payload] of routes) {
      const res = await t.app.inject({
        method: method as any,
        url,
        headers: bearer(user.token),
        ...(payload ? { payload: payload as object } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().code).toBe('phone_not_verified');
    }
    expect(
      await t.database.db.selectFrom('data_roots').select('user_id').where('user_id', '=', user.id).execute(),
    ).toHaveLength(0);
  });

  it('answers 401 without credentials on every route', async () => {
    for (const [method, url, payload] of routes) {
      const res = await t.app.inject({
        method: method as any,
        url,
        ...(payload ? { payload: payload as object } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
    }
  });

  it('documents every data route in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    for (const [method, url] of routes) {
      const path = url.replace(/\/(k1|o1)(?=\/|$)/, '/{id}').replace('/calls/r1', '/{type}/{relatedId}');
      const op = doc.paths[path]?.[method.toLowerCase()];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.security).toEqual([{ bearerAuth: [] }, { cookieAuth: [] }]);
      expect(op.tags).toEqual(['data']);
    }
  });
});
