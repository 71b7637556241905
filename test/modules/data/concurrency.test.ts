import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client, createKey, createObject, eventsOf, sampleObject } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('concurrent writers', () => {
  it('50 PATCHes with the same If-Match: exactly one wins, 49 get 412', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    const bodies = Array.from({ length: 50 }, () => sampleObject(keyId));
    const answers = await Promise.all(
      bodies.map((body) => api.patch(`/api/objects/${object.id}`, body, { 'if-match': '"1"' })),
    );
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 412)).toHaveLength(49);
    const winner = answers.find((a) => a.statusCode === 200)!.json();
    const stored = (await api.get(`/api/objects/${object.id}`)).json();
    expect(stored).toEqual(winner);
    expect(stored.version).toBe(2);
    expect(await eventsOf(t, user.id, 'object_updated')).toHaveLength(1);
  });

  it('50 PATCHes without If-Match all apply, one version each', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => api.patch(`/api/objects/${object.id}`, sampleObject(keyId))),
    );
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.json().version)).size).toBe(50);
    expect((await api.get(`/api/objects/${object.id}`)).json().version).toBe(51);
  });

  it('two concurrent re-parentings cannot close a cycle between them', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    for (let round = 0; round < 5; round++) {
      const a = await createObject(api, keyId);
      const b = await createObject(api, keyId);
      const [ab, ba] = await Promise.all([
        api.patch(`/api/objects/${a.id}`, sampleObject(keyId, { relatedId: b.id })),
        api.patch(`/api/objects/${b.id}`, sampleObject(keyId, { relatedId: a.id })),
      ]);
      expect([ab.statusCode, ba.statusCode].sort()).toEqual([200, 400]);
      const parents = [
        (await api.get(`/api/objects/${a.id}`)).json().relatedId,
        (await api.get(`/api/objects/${b.id}`)).json().relatedId,
      ];
      expect(parents.filter((p) => p === null)).toHaveLength(1);
    }
  });
});
