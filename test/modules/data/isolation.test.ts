// User B must never reach user A's data: every route answers as if A's ids did
// not exist (404 for path ids; the documented 400 for ids inside a body).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type Client, client, createKey, createObject, sampleObject } from './support.js';

let t: TestApp;
let alice: Client;
let bob: Client;
let a: { keyId: string; objectId: string; childId: string; root: any };

beforeAll(async () => {
  t = await createTestApp();
  alice = client(t, await createVerifiedUser(t));
  bob = client(t, await createVerifiedUser(t));
  await alice.post('/api/servers', { name: 'alice-edge', mode: 'generate' });
  const keyId = await createKey(alice);
  const object = await createObject(alice, keyId);
  const child = await createObject(alice, keyId, { relatedId: object.id });
  await alice.put('/api/objects/publish/calls/shared-name', { objectId: object.id });
  a = { keyId, objectId: object.id, childId: child.id, root: (await alice.get('/api/root')).json() };
});
afterAll(() => t.close());

describe("another user's ids", () => {
  it('answer 404 on every route addressed by id', async () => {
    const body = async () => sampleObject(await createKey(bob));
    const attempts: Array<[string, () => Promise<{ statusCode: number; json(): any }>]> = [
      ['GET object', () => bob.get(`/api/objects/${a.objectId}`)],
      ['GET root object', () => bob.get(`/api/objects/${a.root.id}`)],
      ['PATCH object', async () => bob.patch(`/api/objects/${a.objectId}`, await body(), { 'if-match': '"1"' })],
      ['DELETE object', () => bob.del(`/api/objects/${a.objectId}`)],
      ['DELETE store container', () => bob.del(`/api/objects/${a.root.stores.contacts.id}`)],
      ['GET related', () => bob.get(`/api/objects/${a.objectId}/related`)],
      ['GET key', () => bob.get(`/api/keys/${a.keyId}`)],
      ['GET store key', () => bob.get(`/api/keys/${a.root.stores.calls.keyId}`)],
      ['DELETE key', () => bob.del(`/api/keys/${a.keyId}`)],
      ['PUT object under A parent', async () => bob.put('/api/objects', { ...(await body()), relatedId: a.objectId })],
      [
        'PUT object under A store',
        async () => bob.put('/api/objects', { ...(await body()), relatedId: a.root.stores.contacts.id }),
      ],
      ['publish A object', () => bob.put('/api/objects/publish/calls/anything', { objectId: a.objectId })],
      ['unpublish A publication', () => bob.del('/api/objects/publish/calls/shared-name')],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      expect(res.statusCode, what).toBe(404);
      expect(res.json().code, what).toBe('not_found');
    }
  });

  it('re-parenting onto A object answers 404', async () => {
    const keyId = await createKey(bob);
    const mine = await createObject(bob, keyId);
    const res = await bob.patch(`/api/objects/${mine.id}`, sampleObject(keyId, { relatedId: a.objectId }));
    expect(res.statusCode).toBe(404);
  });

  it("A's key id in a body is an invalid key (400), A's server name an unknown server (400)", async () => {
    const res = await bob.put('/api/objects', sampleObject(a.keyId));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_key');
    const server = await bob.put('/api/keys', { server: 'alice-edge' });
    expect(server.statusCode).toBe(400);
    expect((await bob.get('/api/servers')).json()).toEqual([]);
  });

  it("leaves A's data untouched and B's own namespace separate", async () => {
    const object = (await alice.get(`/api/objects/${a.objectId}`)).json();
    expect(object.version).toBe(1);
    expect((await alice.get(`/api/objects/${a.objectId}/related`)).json().map((o: any) => o.id)).toEqual([a.childId]);
    expect((await alice.get(`/api/keys/${a.keyId}`)).statusCode).toBe(200);
    expect(await t.services.data.publish.findPublished(await idOf(alice), 'calls', 'shared-name')).toMatchObject({
      objectId: a.objectId,
    });
    // B publishing under the same (type, relatedId) does not touch A's entry.
    const bobObject = await createObject(bob, await createKey(bob));
    expect((await bob.put('/api/objects/publish/calls/shared-name', { objectId: bobObject.id })).statusCode).toBe(200);
    expect(await t.services.data.publish.findPublished(await idOf(alice), 'calls', 'shared-name')).toMatchObject({
      objectId: a.objectId,
    });
    expect((await bob.get('/api/root')).json().id).not.toBe(a.root.id);
  });
});

async function idOf(api: Client): Promise<string> {
  return (await api.get('/api/auth')).json().auth.id;
}
