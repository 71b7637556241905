import { createDecipheriv, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { ISO, client, createKey, createObject, encrypt, eventsOf } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const currentServer = async () => (await t.services.data.serviceKeys.current()).current;

describe('store keys', () => {
  it('creates a random AES-256 key bound to the current server and reads it back in hex', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const server = await currentServer();
    const res = await api.put('/api/keys', { server });
    expect(res.statusCode).toBe(200);
    const { id } = res.json();
    expect(res.json()).toEqual({ id: expect.any(String) });
    const key = (await api.get(`/api/keys/${id}`)).json();
    expect(key).toEqual({
      id,
      server,
      key: expect.stringMatching(/^[0-9a-f]{64}$/),
      iv: expect.stringMatching(/^[0-9a-f]{24}$/),
      created_at: expect.stringMatching(ISO),
      deprecated: false,
    });
    const other = (await api.get(`/api/keys/${(await api.put('/api/keys', { server })).json().id}`)).json();
    expect(other.key).not.toBe(key.key);

    const [event] = await eventsOf(t, user.id, 'key_created');
    expect(event.payload).toEqual({ key_id: id, user_id: user.id, created_at: key.created_at });
  });

  it('accepts a key and iv brought by the client (base64) and keeps them sealed at rest', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const material = randomBytes(32);
    const iv = randomBytes(12);
    const { id } = (
      await api.put('/api/keys', {
        server: await currentServer(),
        key: material.toString('base64'),
        iv: iv.toString('base64'),
      })
    ).json();
    const key = (await api.get(`/api/keys/${id}`)).json();
    expect(key.key).toBe(material.toString('hex'));
    expect(key.iv).toBe(iv.toString('hex'));
    const row = await t.database.db.selectFrom('store_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    for (const encoding of ['hex', 'base64', 'base64url'] as const)
      expect(row.key_material).not.toContain(material.toString(encoding).slice(0, 20));
  });

  it('binds a key to one of the caller’s registered servers', async () => {
    const api = client(t, await createVerifiedUser(t));
    await api.post('/api/servers', { name: 'edge', mode: 'generate' });
    const { id } = (await api.put('/api/keys', { server: 'edge' })).json();
    expect((await api.get(`/api/keys/${id}`)).json().server).toBe('edge');
  });

  it('refuses bad key material and unknown servers with 400', async () => {
    const api = client(t, await createVerifiedUser(t));
    const server = await currentServer();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ server, key: randomBytes(16).toString('base64') }, /32 bytes/],
      [{ server, key: randomBytes(33).toString('base64') }, /32 bytes/],
      [{ server, key: `${randomBytes(32).toString('base64url')}!` }, /base64/],
      [{ server, key: randomBytes(32).toString('base64').slice(0, -1) }, /base64/],
      [{ server, iv: randomBytes(16).toString('base64') }, /12 bytes/],
      [{ server: 'nowhere' }, /server/],
      [{}, /server/],
    ];
    for (const [body, message] of cases) {
      const res = await api.put('/api/keys', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toMatch(message);
    }
  });

  it('DELETE removes the key metadata; objects encrypted with it stay readable but no new ones can use it', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const object = await createObject(api, keyId);
    const del = await api.del(`/api/keys/${keyId}`);
    expect(del.statusCode).toBe(204);
    expect((await api.get(`/api/keys/${keyId}`)).statusCode).toBe(404);
    expect((await api.del(`/api/keys/${keyId}`)).statusCode).toBe(404);
    const stillThere = await api.get(`/api/objects/${object.id}`);
    expect(stillThere.statusCode).toBe(200);
    expect(stillThere.json().keyId).toBe(keyId);
    const reuse = await api.put('/api/objects', {
      keyId,
      content: 'AAAA',
      authTag: randomBytes(16).toString('base64'),
    });
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json().code).toBe('invalid_key');

    const [event] = await eventsOf(t, user.id, 'key_deleted');
    expect(event.payload).toEqual({ key_id: keyId, user_id: user.id, deleted_at: expect.stringMatching(ISO) });
  });
});

describe('AES-256-GCM round trip', () => {
  it('encrypts with the key from GET /api/keys/{id}, stores, reads back and decrypts; tampering fails', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const { key } = (await api.get(`/api/keys/${keyId}`)).json();
    const plaintext = JSON.stringify({ name: 'Grace Hopper', phone: '+15550100' });
    const sealed = encrypt(key, plaintext);
    const created = await api.put('/api/objects', { keyId, ...sealed });
    expect(created.statusCode).toBe(200);

    const stored = (await api.get(`/api/objects/${created.json().id}`)).json();
    const decrypt = (contentHex: string, tagHex: string) => {
      const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'hex'), Buffer.from(stored.iv, 'hex'));
      decipher.setAuthTag(Buffer.from(tagHex, 'hex'));
      return Buffer.concat([decipher.update(Buffer.from(contentHex, 'hex')), decipher.final()]).toString('utf8');
    };
    expect(decrypt(stored.content, stored.auth_tag)).toBe(plaintext);

    const flipped = Buffer.from(stored.content, 'hex');
    flipped[0] ^= 1;
    expect(() => decrypt(flipped.toString('hex'), stored.auth_tag)).toThrow(/authenticate/);
    const badTag = Buffer.from(stored.auth_tag, 'hex');
    badTag[15] ^= 1;
    expect(() => decrypt(stored.content, badTag.toString('hex'))).toThrow(/authenticate/);
  });

  it('works the same with a store default key from the root', async () => {
    const api = client(t, await createVerifiedUser(t));
    const { stores } = (await api.get('/api/root')).json();
    const { key } = (await api.get(`/api/keys/${stores.tasks.keyId}`)).json();
    const sealed = encrypt(key, 'call the plumber');
    const { id } = (
      await api.put('/api/objects', { keyId: stores.tasks.keyId, relatedId: stores.tasks.id, ...sealed })
    ).json();
    const [child] = (await api.get(`/api/objects/${stores.tasks.id}/related`)).json();
    expect(child.id).toBe(id);
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key, 'hex'), Buffer.from(child.iv, 'hex'));
    decipher.setAuthTag(Buffer.from(child.auth_tag, 'hex'));
    expect(Buffer.concat([decipher.update(Buffer.from(child.content, 'hex')), decipher.final()]).toString()).toBe(
      'call the plumber',
    );
  });
});
