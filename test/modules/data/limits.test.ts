// The object content limit (413) and its coherence with the general body limit.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client, createKey, createObject } from './support.js';

const LIMIT = 8192;
let t: TestApp;
beforeAll(async () => {
  // A general body limit below the base64 size of an object at the content limit.
  t = await createTestApp({ config: { objectContentLimitBytes: LIMIT, bodyLimitBytes: 4096 } });
});
afterAll(() => t.close());

const body = (keyId: string, size: number) => ({
  keyId,
  content: randomBytes(size).toString('base64'),
  authTag: randomBytes(16).toString('base64'),
});

describe('object content limit', () => {
  it('accepts content at the limit even when its base64 exceeds the general body limit', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.put('/api/objects', body(await createKey(api), LIMIT));
    expect(res.statusCode).toBe(200);
    expect(res.json().metadata.size).toBe(LIMIT);
  });

  it('answers 413 payload_too_large above the limit, on PUT and PATCH, and stores nothing', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    for (const size of [LIMIT + 1, LIMIT + 2, LIMIT + 3]) {
      const res = await api.put('/api/objects', body(keyId, size));
      expect(res.statusCode, String(size)).toBe(413);
      expect(res.json().code).toBe('payload_too_large');
    }
    const object = await createObject(api, keyId);
    const patch = await api.patch(`/api/objects/${object.id}`, body(keyId, LIMIT + 1));
    expect(patch.statusCode).toBe(413);
    expect((await api.get(`/api/objects/${object.id}`)).json().version).toBe(1);
    expect(
      await t.database.db.selectFrom('objects').select('id').where('user_id', '=', user.id).execute(),
    ).toHaveLength(1);
  });

  it('answers 413 for a body far beyond what the route allows', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.put('/api/objects', body('k', LIMIT * 4));
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
  });

  it('keeps the general body limit on other data routes', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/servers', { name: 'x', mode: 'generate', publicKey: 'A'.repeat(5000) });
    expect(res.statusCode).toBe(413);
  });
});

describe('default limits', () => {
  it('take an 8 MiB object within the default 16 MiB body limit and refuse one byte more', async () => {
    const d = await createTestApp();
    try {
      expect(d.config.objectContentLimitBytes).toBe(8 * 1024 * 1024);
      const api = client(d, await createVerifiedUser(d));
      const keyId = await createKey(api);
      const ok = await api.put('/api/objects', body(keyId, 8 * 1024 * 1024));
      expect(ok.statusCode).toBe(200);
      const tooBig = await api.put('/api/objects', body(keyId, 8 * 1024 * 1024 + 1));
      expect(tooBig.statusCode).toBe(413);
    } finally {
      await d.close();
    }
  });
});
