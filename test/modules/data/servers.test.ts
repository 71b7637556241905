import {
  createECDH,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  sign,
  verify,
} from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDataServices } from '../../../src/modules/data/create-services.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { ISO, client } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const spkiOf = (key: ReturnType<typeof createPublicKey>) =>
  key.export({ format: 'der', type: 'spki' }).toString('base64url');

describe('GET /api/server', () => {
  it('names the current server and gives the same P-256 public key as SPKI and JWK', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.get('/api/server');
    expect(res.statusCode).toBe(200);
    const { current, keys } = res.json();
    expect(current).toMatch(/^workspace-\d+$/);
    const fromSpki = createPublicKey({ key: Buffer.from(keys.spki, 'base64url'), format: 'der', type: 'spki' });
    expect(fromSpki.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(keys.jwk).toMatchObject({ kty: 'EC', crv: 'P-256', kid: current, use: 'enc', alg: 'ECDH-ES+A256KW' });
    expect(spkiOf(createPublicKey({ key: keys.jwk, format: 'jwk' }))).toBe(keys.spki);
    expect(keys.jwk.d).toBeUndefined();
  });

  it('creates one key pair when first calls race, across two service instances', async () => {
    const fresh = await createTestApp();
    try {
      const user = await createVerifiedUser(fresh);
      const other = createDataServices({
        db: fresh.database.db,
        dialect: fresh.database.dialect,
        secretBox: fresh.services.platform.secretBox,
        eventRecorder: fresh.services.events.eventRecorder,
        clock: fresh.clock,
        config: { objectContentLimitBytes: 1024 },
        singleUse: fresh.services.platform.singleUse,
      });
      const api = client(fresh, user);
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, () => api.get('/api/server').then((r) => r.json())),
        ...Array.from({ length: 6 }, () => other.serviceKeys.current()),
      ]);
      expect(new Set(answers.map((a) => a.keys.spki)).size).toBe(1);
      expect(answers[0].current).toBe('workspace-1');
      expect(await fresh.database.db.selectFrom('service_keys').select('name').execute()).toEqual([
        { name: 'workspace-1' },
      ]);
    } finally {
      await fresh.close();
    }
  });
});

describe('service key rotation', () => {
  it('makes a new key pair current and keeps the old ones for decryption', async () => {
    const fresh = await createTestApp();
    try {
      const { serviceKeys } = fresh.services.data;
      const api = client(fresh, await createVerifiedUser(fresh));
      const before = (await api.get('/api/server')).json();

      // A client derives a secret for the current key (ECDH, as JWE ECDH-ES does).
      const ephemeral = createECDH('prime256v1');
      ephemeral.generateKeys();
      const oldPublic = createPublicKey({
        key: Buffer.from(before.keys.spki, 'base64url'),
        format: 'der',
        type: 'spki',
      });
      const clientSecret = ephemeral.computeSecret(rawPoint(oldPublic));

      const rotated = await serviceKeys.rotateServiceKey();
      expect(rotated.current).not.toBe(before.current);
      const after = (await api.get('/api/server')).json();
      expect(after).toEqual(rotated);
      expect(after.keys.spki).not.toBe(before.keys.spki);
      expect((await api.get('/api/root')).json().server.current).toBe(after.current);

      const oldPrivate = await serviceKeys.getServicePrivateKey(before.current);
      expect(oldPrivate).not.toBeNull();
      const ephemeralPublic = createPublicKey({ key: pointToJwk(ephemeral.getPublicKey()), format: 'jwk' });
      expect(diffieHellman({ privateKey: oldPrivate!, publicKey: ephemeralPublic })).toEqual(clientSecret);
      const newPrivate = await serviceKeys.getServicePrivateKey(after.current);
      expect(diffieHellman({ privateKey: newPrivate!, publicKey: ephemeralPublic })).not.toEqual(clientSecret);
      expect(spkiOf(createPublicKey(newPrivate!))).toBe(after.keys.spki);

      expect((await serviceKeys.listServiceKeys()).map((k) => k.name)).toEqual([before.current, after.current]);
      expect(await serviceKeys.getServicePrivateKey('workspace-99')).toBeNull();

      // Store keys bind to the current server only.
      expect((await api.put('/api/keys', { server: after.current })).statusCode).toBe(200);
      expect((await api.put('/api/keys', { server: before.current })).statusCode).toBe(400);
    } finally {
      await fresh.close();
    }
  });

  it('knows its key pairs by name, retired ones too, and finds a name that was unknown once it exists', async () => {
    const fresh = await createTestApp();
    try {
      const { serviceKeys } = fresh.services.data;
      const first = await serviceKeys.current();
      const next = `workspace-${Number(first.current.slice('workspace-'.length)) + 1}`;
      expect(await serviceKeys.isServiceServer(next)).toBe(false);
      expect(await serviceKeys.getServicePublicKey(next)).toBeNull();
      const rotated = await serviceKeys.rotateServiceKey();
      expect(rotated.current).toBe(next);
      // The miss was not remembered: the new pair is found, and the retired one stays a service key.
      expect(await serviceKeys.isServiceServer(next)).toBe(true);
      expect(await serviceKeys.isServiceServer(first.current)).toBe(true);
      expect(await serviceKeys.isServiceServer('my-server')).toBe(false);
      const key = await serviceKeys.getServicePublicKey(first.current);
      expect(spkiOf(key!)).toBe(first.keys.spki);
      expect(await serviceKeys.getServicePublicKey(first.current)).toBe(key);
      expect(spkiOf((await serviceKeys.getServicePublicKey(next))!)).toBe(rotated.keys.spki);
    } finally {
      await fresh.close();
    }
  });

  it('stores private keys sealed, never in clear', async () => {
    const { serviceKeys } = t.services.data;
    const { current } = await serviceKeys.current();
    const privateKey = await serviceKeys.getServicePrivateKey(current);
    const pkcs8 = privateKey!.export({ format: 'der', type: 'pkcs8' });
    const row = await t.database.db
      .selectFrom('service_keys')
      .selectAll()
      .where('name', '=', current)
      .executeTakeFirstOrThrow();
    expect(row.private_key.startsWith('v1.')).toBe(true);
    for (const encoding of ['base64', 'base64url', 'hex'] as const)
      expect(row.private_key).not.toContain(pkcs8.toString(encoding).slice(0, 40));
  });
});

describe('registered servers', () => {
  it('generate returns the private key once and stores only the public key', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const res = await api.post('/api/servers', { name: 'edge-1', mode: 'generate' });
    expect(res.statusCode).toBe(200);
    const { name, publicKey, privateKey, createdAt } = res.json();
    expect(name).toBe('edge-1');
    expect(createdAt).toMatch(ISO);
    const priv = createPrivateKey({ key: Buffer.from(privateKey, 'base64url'), format: 'der', type: 'pkcs8' });
    const pub = createPublicKey({ key: Buffer.from(publicKey, 'base64url'), format: 'der', type: 'spki' });
    expect(pub.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const signature = sign('sha256', Buffer.from('hello'), priv);
    expect(verify('sha256', Buffer.from('hello'), pub, signature)).toBe(true);

    const list = (await api.get('/api/servers')).json();
    expect(list).toEqual([{ name: 'edge-1', publicKey, createdAt }]);
    const rows = await t.database.db.selectFrom('servers').selectAll().where('user_id', '=', user.id).execute();
    expect(JSON.stringify(rows)).not.toContain(privateKey.slice(-40));
  });

  it('upload_public accepts a P-256 SPKI and answers without a private key', async () => {
    const api = client(t, await createVerifiedUser(t));
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const res = await api.post('/api/servers', { name: 'mine', mode: 'upload_public', publicKey: spkiOf(publicKey) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'mine', publicKey: spkiOf(publicKey), createdAt: expect.stringMatching(ISO) });
  });

  it('refuses keys that are not P-256 SPKI, and bad names, with 400 and a message', async () => {
    const api = client(t, await createVerifiedUser(t));
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey;
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    const ed = generateKeyPairSync('ed25519').publicKey;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ name: 'a', mode: 'upload_public', publicKey: spkiOf(p384) }, /P-256/],
      [{ name: 'a', mode: 'upload_public', publicKey: spkiOf(rsa) }, /P-256.*rsa/],
      [{ name: 'a', mode: 'upload_public', publicKey: spkiOf(ed) }, /P-256/],
      [{ name: 'a', mode: 'upload_public', publicKey: 'bm90IGEga2V5' }, /SubjectPublicKeyInfo/],
      [{ name: 'a', mode: 'upload_public', publicKey: 'not base64url!' }, /base64url/],
      [{ name: 'a', mode: 'upload_public' }, /required/],
      [{ name: 'bad name', mode: 'generate' }, /name/],
      [{ name: 'workspace-7', mode: 'generate' }, /reserved/],
      [{ name: 'a', mode: 'nope' }, /mode/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/api/servers', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toMatch(message);
    }
    expect((await api.get('/api/servers')).json()).toEqual([]);
  });

  it('answers 409 for a duplicate name; names are per user', async () => {
    const alice = client(t, await createVerifiedUser(t));
    const bob = client(t, await createVerifiedUser(t));
    expect((await alice.post('/api/servers', { name: 'prod', mode: 'generate' })).statusCode).toBe(200);
    const dup = await alice.post('/api/servers', { name: 'prod', mode: 'generate' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().code).toBe('conflict');
    expect((await bob.post('/api/servers', { name: 'prod', mode: 'generate' })).statusCode).toBe(200);
    expect((await alice.get('/api/servers')).json()).toHaveLength(1);
  });
});

/** The uncompressed point (0x04 || x || y) of an EC public key. */
function rawPoint(key: ReturnType<typeof createPublicKey>): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

function pointToJwk(point: Buffer) {
  return {
    kty: 'EC',
    crv: 'P-256',
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
}
