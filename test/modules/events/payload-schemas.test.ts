// What the data plane's writers record matches the payload schemas the OpenAPI
// document publishes (components/schemas <Type>Event, closed): every event a
// user's keys, objects, children and publications produce, through the routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { loggedEventErrors } from '../../support/event-schemas.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client, createKey, createObject, sampleObject } from '../data/support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('event payloads against their documented schemas', () => {
  it('key, object, child, publish and delete events of the data plane match', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const root = (await api.get('/api/root')).json();
    const keyId = await createKey(api);
    const parent = (await createObject(api, keyId, { relatedId: root.stores.contacts.id })).id;
    const child = (await createObject(api, keyId, { relatedId: parent })).id;
    const detached = await api.patch(`/api/objects/${child}`, sampleObject(keyId, { relatedId: null }));
    expect(detached.statusCode, detached.body).toBe(200);
    expect(
      (await api.put(`/api/objects/publish/contacts/${root.stores.contacts.id}`, { objectId: parent })).statusCode,
    ).toBe(200);
    expect((await api.del(`/api/objects/publish/contacts/${root.stores.contacts.id}`)).statusCode).toBeLessThan(300);
    expect((await api.del(`/api/objects/${child}`)).statusCode).toBeLessThan(300);
    expect((await api.del(`/api/objects/${parent}`)).statusCode).toBeLessThan(300);
    expect((await api.del(`/api/keys/${keyId}`)).statusCode).toBeLessThan(300);

    const { types, errors } = await loggedEventErrors(t.database.db, user.id);
    expect(types).toEqual([
      'key_created',
      'key_deleted',
      'object_created',
      'object_deleted',
      'object_updated',
      'publish',
      'unpublish',
    ]);
    expect(errors).toEqual([]);
  });
});
