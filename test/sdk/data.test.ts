// The SDK against a real server: encrypt in the SDK, store, read back,
// decrypt; tampering refused; store helpers; account calls keep the token;
// service errors surface as WorkspaceApiError.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DecryptionError,
  WorkspaceApiError,
  WorkspaceClient,
  decryptJson,
  encrypt,
  encryptJson,
  objectInput,
} from '../../sdk/src/index.js';
import { registerUser } from '../support/factories.js';
import { type ListeningApp, startServer, verifiedClient } from './support.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Flips one bit in the stored ciphertext or tag, in the database, as an attacker with storage access could. */
async function tamper(objectId: string, column: 'content' | 'auth_tag') {
  const row = await server.t.database.db
    .selectFrom('objects')
    .select(column)
    .where('id', '=', objectId)
    .executeTakeFirstOrThrow();
  const bytes = Buffer.from(row[column] as Buffer);
  bytes[bytes.length - 1] ^= 0x80;
  await server.t.database.db
    .updateTable('objects')
    .set({ [column]: bytes })
    .where('id', '=', objectId)
    .execute();
}

describe('crypto round trip through the service', () => {
  it('encrypts in the SDK, stores with PUT /api/objects, reads back and decrypts with the key from GET /api/keys/{id}', async () => {
    const { client } = await verifiedClient(server);
    const root = await client.root();
    const { id: storeId, keyId } = root.stores.contacts;
    const key = await client.keys.get(keyId);
    expect(key.key).toMatch(/^[0-9a-f]{64}$/);

    const value = { name: 'Ada Lovelace', notes: 'Analytical Engine 🚂' };
    const payload = await encryptJson(key.key, value);
    const created = await client.objects.create(objectInput(keyId, payload, storeId));
    expect(created.relatedId).toBe(storeId);
    // The service answers hex of exactly the bytes the SDK sent as base64.
    expect(created.content).toBe(Buffer.from(payload.content, 'base64').toString('hex'));
    expect(created.auth_tag).toBe(Buffer.from(payload.authTag, 'base64').toString('hex'));
    expect(created.iv).toBe(Buffer.from(payload.iv, 'base64').toString('hex'));

    const read = await client.objects.get(created.id);
    expect(await decryptJson(key.key, read)).toEqual(value);
    expect(await client.objects.decrypt(read)).toEqual(value);
    // The plaintext never reached the service.
    const row = await server.t.database.db
      .selectFrom('objects')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(row.content).toString('utf8')).not.toContain('Ada');
  });

  it.each(['content', 'auth_tag'] as const)('refuses to decrypt after the stored %s was altered', async (column) => {
    const { client } = await verifiedClient(server);
    const records = client.store<{ secret: string }>('contacts');
    const { id } = await records.create({ secret: 'do not change me' });
    await tamper(id, column);
    await expect(records.get(id)).rejects.toBeInstanceOf(DecryptionError);
    await expect(records.list()).rejects.toBeInstanceOf(DecryptionError);
  });

  it("refuses another key's ciphertext: a different store's key does not open it", async () => {
    const { client } = await verifiedClient(server);
    const root = await client.root();
    const contactsKey = await client.keys.get(root.stores.contacts.keyId);
    const callsKey = await client.keys.get(root.stores.calls.keyId);
    const created = await client.objects.create(
      objectInput(root.stores.contacts.keyId, await encrypt(contactsKey.key, 'x'), root.stores.contacts.id),
    );
    await expect(decryptJson(callsKey.key, await client.objects.get(created.id))).rejects.toBeInstanceOf(
      DecryptionError,
    );
  });

  it('decrypts an object stored without its own IV with the key IV (compatibility)', async () => {
    const { client } = await verifiedClient(server);
    const { id: storeId, keyId } = (await client.root()).stores.tasks;
    const key = await client.keys.get(keyId);
    // Encrypt with the key's IV the way an old client would (node:crypto, not the SDK, which never reuses an IV).
    const { createCipheriv } = await import('node:crypto');
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(key.key, 'hex'), Buffer.from(key.iv, 'hex'));
    const content = Buffer.concat([cipher.update('{"legacy":true}'), cipher.final()]);
    const created = await client.objects.create({
      keyId,
      content: content.toString('base64'),
      authTag: cipher.getAuthTag().toString('base64'),
      relatedId: storeId,
    });
    expect(created.iv).toBeNull();
    expect(await client.store('tasks').get(created.id)).toMatchObject({ id: created.id, value: { legacy: true } });
  });
});

describe('store helpers', () => {
  type Contact = { name: string; phone?: string };

  it('create, list, get, update with ifMatch, delete', async () => {
    const { client } = await verifiedClient(server);
    const contacts = client.store<Contact>('contacts');
    const a = await contacts.create({ name: 'Ada' });
    const b = await contacts.create({ name: 'Grace', phone: '+14155550123' });
    expect(a).toMatchObject({ value: { name: 'Ada' }, version: 1 });

    const listed = await contacts.list();
    expect(listed.map((r) => [r.id, r.value])).toEqual([
      [a.id, { name: 'Ada' }],
      [b.id, { name: 'Grace', phone: '+14155550123' }],
    ]);
    expect((await contacts.list({ limit: 1 })).map((r) => r.id)).toEqual([a.id]);
    expect((await contacts.list({ after: a.id })).map((r) => r.id)).toEqual([b.id]);

    const before = await client.objects.get(a.id);
    const updated = await contacts.update(a.id, { name: 'Ada Lovelace' }, { ifMatch: a.version });
    expect(updated.version).toBe(2);
    expect((await contacts.get(a.id)).value).toEqual({ name: 'Ada Lovelace' });
    // Every write draws a fresh IV, the update included.
    const after = await client.objects.get(a.id);
    expect(new Set([before.iv, after.iv, (await client.objects.get(b.id)).iv]).size).toBe(3);

    // A writer still holding version 1 is refused instead of overwriting.
    const stale = await contacts.update(a.id, { name: 'lost update' }, { ifMatch: a.version }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(WorkspaceApiError);
    expect(stale).toMatchObject({ status: 412, code: 'version_mismatch' });
    expect((await contacts.get(a.id)).value).toEqual({ name: 'Ada Lovelace' });

    await contacts.delete(a.id);
    expect((await contacts.list()).map((r) => r.id)).toEqual([b.id]);
    await expect(contacts.get(a.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('keeps stores apart: records of one store are not listed in another', async () => {
    const { client } = await verifiedClient(server);
    await client.store('contacts').create({ name: 'in contacts' });
    await client.store('agents').create({ name: 'in agents' });
    expect((await client.store('contacts').list()).map((r) => r.value)).toEqual([{ name: 'in contacts' }]);
    expect((await client.store('agents').list()).map((r) => r.value)).toEqual([{ name: 'in agents' }]);
  });

  it("cannot read another user's record (404, the id is not revealed)", async () => {
    const { client: alice } = await verifiedClient(server);
    const { client: bob } = await verifiedClient(server);
    const record = await alice.store('contacts').create({ name: 'private' });
    await expect(bob.store('contacts').get(record.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('account access and credentials', () => {
  it('register keeps the token; the phone is verified through the sandbox outbox; login and logout', async () => {
    const client = new WorkspaceClient({ baseUrl: server.baseUrl });
    const unique = randomBytes(4).readUInt32BE(0) % 10_000_000;
    const email = `sdk${unique}@example.com`;
    const phone = `+1555${String(unique).padStart(7, '0')}`;
    const password = 'correct horse battery staple';

    const session = await client.auth.register({ email, phone, password, confirmPassword: password, firstName: 'Ada' });
    expect(session.status).toBe('phone_not_verified');
    expect(client.token).toBe(session.token);
    await expect(client.root()).rejects.toMatchObject({ status: 403, code: 'phone_not_verified' });

    await client.auth.requestPhoneVerification();
    const [sms] = await client.sandboxOutbox({ to: phone });
    const verified = await client.auth.submitPhoneVerification(String(sms.data.code));
    expect(verified.status).toBe('ok');
    expect(client.token).toBe(verified.token);
    expect(client.token).not.toBe(session.token);
    expect((await client.auth.status()).auth).toMatchObject({ email, phoneVerified: true });
    expect((await client.root()).stores.contacts.id).toEqual(expect.any(String));

    await client.auth.logout();
    expect(client.token).toBeNull();
    await expect(client.auth.status()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });

    const again = await client.auth.login({ email, password });
    expect(again.status).toBe('ok');
    expect(client.token).toBe(again.token);
    const refused = await client.auth.login({ email, password: 'wrong password!' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_credentials', body: { status: 'error' } });
  });

  it('works with an API key in place of a session token', async () => {
    const { client } = await verifiedClient(server);
    const { key } = await client.apiKeys.create('sdk test');
    const byKey = new WorkspaceClient({ baseUrl: server.baseUrl, apiKey: key });
    const record = await byKey.store('campaigns').create({ name: 'spring' });
    expect((await client.store('campaigns').get(record.id)).value).toEqual({ name: 'spring' });
    // Logging out does not drop an API key (only deleting it revokes it).
    await byKey.auth.logout();
    expect(byKey.token).toBe(key);
  });

  it('surfaces input errors with the service code, and an unverified user cannot reach the data plane', async () => {
    const user = await registerUser(server.t);
    const client = new WorkspaceClient({ baseUrl: server.baseUrl, token: user.token });
    await expect(client.store('contacts').create({ a: 1 })).rejects.toMatchObject({
      status: 403,
      code: 'phone_not_verified',
    });
    const { client: verified } = await verifiedClient(server);
    const { keyId } = (await verified.root()).stores.contacts;
    const bad = await verified.objects
      .create({ keyId, content: 'not base64!', authTag: 'AAAA' })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(WorkspaceApiError);
    expect(bad).toMatchObject({ status: 400, code: expect.any(String) });
    expect((bad as Error).message).toMatch(/base64/);
  });
});
