// The one verification module for signed payloads (persona previews, call
// sessions): ES256 JWS from a registered server, optionally inside a JWE to
// the service key; exp bounded, jti single-use across instances.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT, compactDecrypt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/http/errors.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import {
  type RegisteredServer,
  encryptToService,
  privateKeyOf,
  registerServer,
  signPayload,
  unsignedToken,
} from '../../support/signed-payloads.js';

let t: TestApp;
let user: TestUser;
let server: RegisteredServer;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
  server = await registerServer(t, user);
});
afterAll(() => t.close());

const payloads = () => t.services.data.signedPayloads;
const now = () => t.clock.now();

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('SignedPayloads.verify', () => {
  it('accepts a plain ES256 JWS from the named registered server and returns its claims', async () => {
    const jwt = await signPayload(server, { use: 'persona-preview', hello: 'world' }, { now: now() });
    const verified = await payloads().verify(user.id, server.name, jwt, { use: 'persona-preview' });
    expect(verified.encrypted).toBe(false);
    expect(verified.claims).toMatchObject({ use: 'persona-preview', hello: 'world' });
    expect(verified.serverPublicKey.export({ format: 'der', type: 'spki' }).toString('base64url')).toBe(
      server.publicKey,
    );
  });

  it('accepts the JWS nested in a JWE to the current service key, with or without kid', async () => {
    const serviceKey = await t.services.data.servers.currentServer();
    const nested = await encryptToService(
      await signPayload(server, { use: 'persona-preview' }, { now: now() }),
      serviceKey,
    );
    expect(nested.split('.')).toHaveLength(5);
    expect((await payloads().verify(user.id, server.name, nested)).encrypted).toBe(true);

    const withoutKid = await encryptToService(await signPayload(server, { n: 2 }, { now: now() }), serviceKey, {
      kid: undefined,
    });
    expect((await payloads().verify(user.id, server.name, withoutKid)).claims.n).toBe(2);
  });

  it('refuses a JWE that is not ECDH-ES+A256KW/A256GCM, lacks cty JWT, names an unknown key or does not decrypt', async () => {
    const serviceKey = await t.services.data.servers.currentServer();
    const jws = () => signPayload(server, {}, { now: now() });
    const noCty = await encryptToService(await jws(), serviceKey, { cty: undefined });
    expect(await refusal(payloads().verify(user.id, server.name, noCty))).toMatchObject({
      code: 'invalid_token',
      message: expect.stringContaining('cty'),
    });
    const wrongEnc = await encryptToService(await jws(), serviceKey, { enc: 'A128GCM' });
    expect((await refusal(payloads().verify(user.id, server.name, wrongEnc))).code).toBe('invalid_token');
    const unknownKid = await encryptToService(await jws(), serviceKey, { kid: 'workspace-999' });
    expect((await refusal(payloads().verify(user.id, server.name, unknownKid))).message).toContain('unknown key');
    // Encrypted to some other P-256 key, labelled as the service's.
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64url');
    const elsewhere = await encryptToService(await jws(), { current: serviceKey.current, keys: { spki: stranger } });
    expect((await refusal(payloads().verify(user.id, server.name, elsewhere))).message).toContain(
      'could not be decrypted',
    );
  });

  it('keeps accepting payloads encrypted to a rotated-out service key (kid names it)', async () => {
    const fresh = await createTestApp();
    try {
      const u = await createVerifiedUser(fresh);
      const s = await registerServer(fresh, u);
      const old = await fresh.services.data.servers.currentServer();
      await fresh.services.data.serviceKeys.rotateServiceKey();
      const nested = await encryptToService(await signPayload(s, { r: 1 }, { now: fresh.clock.now() }), old);
      expect((await fresh.services.data.signedPayloads.verify(u.id, s.name, nested)).claims.r).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('refuses a forged signature (another key) with invalid_token', async () => {
    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'der', type: 'pkcs8' })
      .toString('base64url');
    const jwt = await signPayload({ privateKey: forger }, { use: 'persona-preview' }, { now: now() });
    const err = await refusal(payloads().verify(user.id, server.name, jwt));
    expect(err).toMatchObject({ code: 'invalid_token', status: 400 });
    expect(err.message).toContain('signature');
  });

  it("refuses a token signed by one of the user's servers but naming another of them", async () => {
    const second = await registerServer(t, user);
    const jwt = await signPayload(server, {}, { now: now() });
    expect((await refusal(payloads().verify(user.id, second.name, jwt))).code).toBe('invalid_token');
  });

  it("answers 404 for a server the caller has not registered, including another user's server", async () => {
    const other = await createVerifiedUser(t);
    const jwt = await signPayload(server, {}, { now: now() });
    expect(await refusal(payloads().verify(other.id, server.name, jwt))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    expect((await refusal(payloads().verify(user.id, 'no-such-server', jwt))).code).toBe('not_found');
    // The service's own server is not a registered server: nobody holds its private key.
    const current = (await t.services.data.servers.currentServer()).current;
    expect((await refusal(payloads().verify(user.id, current, jwt))).code).toBe('not_found');
  });

  it("refuses a token signed with another user's server key even when the caller has a server of the same name", async () => {
    const other = await createVerifiedUser(t);
    await registerServer(t, other, server.name);
    const jwt = await signPayload(server, {}, { now: now() });
    expect((await refusal(payloads().verify(other.id, server.name, jwt))).code).toBe('invalid_token');
  });

  it('refuses expired payloads, exp too far ahead, and missing exp or jti', async () => {
    const expired = await signPayload(server, {}, { now: now() - 20 * 60_000, expiresIn: 300 });
    expect((await refusal(payloads().verify(user.id, server.name, expired))).message).toContain('expired');
    const tooFar = await signPayload(server, {}, { now: now(), expiresIn: 30 * 60 });
    expect((await refusal(payloads().verify(user.id, server.name, tooFar))).message).toContain('10 minutes');
    for (const omit of [['exp'], ['jti']] as const) {
      const jwt = await signPayload(server, {}, { now: now(), omit: [...omit] });
      expect((await refusal(payloads().verify(user.id, server.name, jwt))).code).toBe('invalid_token');
    }
    // Exactly 10 minutes ahead is allowed.
    const limit = await signPayload(server, {}, { now: now(), expiresIn: 600 });
    expect((await payloads().verify(user.id, server.name, limit)).claims.exp).toBe(Math.floor(now() / 1000) + 600);
  });

  it('refuses a token once the service clock has passed its exp', async () => {
    const jwt = await signPayload(server, {}, { now: now(), expiresIn: 60 });
    t.clock.advance(5 * 60_000);
    try {
      expect((await refusal(payloads().verify(user.id, server.name, jwt))).message).toContain('expired');
    } finally {
      t.clock.advance(-5 * 60_000);
    }
  });

  it('refuses alg none, HS256 keyed with the public key, and tokens that are not JWTs', async () => {
    const claims = { exp: Math.floor(now() / 1000) + 60, jti: randomUUID(), use: 'persona-preview' };
    expect((await refusal(payloads().verify(user.id, server.name, unsignedToken(claims)))).code).toBe('invalid_token');
    const hs = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(Buffer.from(server.publicKey, 'base64url'));
    expect((await refusal(payloads().verify(user.id, server.name, hs))).code).toBe('invalid_token');
    const es384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    const other = await new SignJWT(claims).setProtectedHeader({ alg: 'ES384' }).sign(es384);
    expect((await refusal(payloads().verify(user.id, server.name, other))).message).toContain('ES256');
    for (const junk of ['', 'abc', 'a.b.c', 'a.b.c.d', `${'x'.repeat(70_000)}`]) {
      expect((await refusal(payloads().verify(user.id, server.name, junk))).code).toBe('invalid_token');
    }
  });

  it('refuses a payload whose use is not the one asked for', async () => {
    const jwt = await signPayload(server, { use: 'call-session' }, { now: now() });
    expect((await refusal(payloads().verify(user.id, server.name, jwt, { use: 'persona-preview' }))).message).toContain(
      'persona-preview',
    );
  });

  it('accepts a jti once: a replay is invalid_token', async () => {
    const jwt = await signPayload(server, {}, { now: now() });
    await payloads().verify(user.id, server.name, jwt);
    expect((await refusal(payloads().verify(user.id, server.name, jwt))).message).toContain('already used');
    // The same jti in a differently encoded (nested) token is the same payload.
    const nested = await encryptToService(jwt, await t.services.data.servers.currentServer());
    expect((await refusal(payloads().verify(user.id, server.name, nested))).code).toBe('invalid_token');
  });

  it('accepts exactly one of many concurrent uses of one token, across two instances', async () => {
    const second = await createTestApp({
      shareDatabaseWith: { dir: t.dir, pgSchema: t.pgSchema, secrets: t.secrets },
      clock: t.clock,
    });
    try {
      const jwt = await signPayload(server, {}, { now: now() });
      const attempts = Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? second : t).services.data.signedPayloads.verify(user.id, server.name, jwt).then(
          () => 'ok',
          (e: AppError) => e.code,
        ),
      );
      const outcomes = await Promise.all(attempts);
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'invalid_token')).toHaveLength(11);
    } finally {
      await second.close();
    }
  });

  it('does not consume the jti of a refused payload', async () => {
    const jti = randomUUID();
    const wrongUse = await signPayload(server, { use: 'other' }, { now: now(), jti });
    await refusal(payloads().verify(user.id, server.name, wrongUse, { use: 'persona-preview' }));
    const right = await signPayload(server, { use: 'persona-preview' }, { now: now(), jti });
    expect((await payloads().verify(user.id, server.name, right, { use: 'persona-preview' })).claims.jti).toBe(jti);
  });

  it('purges used jtis once their payloads have expired', async () => {
    const jwt = await signPayload(server, {}, { now: now(), expiresIn: 60 });
    const { claims } = await payloads().verify(user.id, server.name, jwt);
    const id = JSON.stringify([user.id, server.name, claims.jti]);
    const count = async () =>
      (
        await t.database.db
          .selectFrom('single_use_tokens')
          .select('id')
          .where('purpose', '=', 'signed-payload')
          .where('id', '=', id)
          .execute()
      ).length;
    expect(await count()).toBe(1);
    await t.services.platform.singleUse.purgeExpired(now());
    expect(await count()).toBe(1);
    await t.services.platform.singleUse.purgeExpired(now() + 10 * 60_000);
    expect(await count()).toBe(0);
  });
});

describe('SignedPayloads.encryptTo', () => {
  it('encrypts bytes to a registered server: its private key decrypts them; header carries contentType', async () => {
    const bytes = new Uint8Array([1, 2, 3, 250, 251, 252]);
    const publicKey = (await t.services.data.servers.getServerPublicKey(user.id, server.name))!;
    const answer = await payloads().encryptTo(publicKey, bytes, 'audio/wav', server.name);
    expect(answer.header).toMatchObject({
      alg: 'ECDH-ES+A256KW',
      enc: 'A256GCM',
      cty: 'audio/wav',
      kid: server.name,
      contentType: 'audio/wav',
    });
    expect(answer.header.epk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    const { plaintext, protectedHeader } = await compactDecrypt(answer.content, privateKeyOf(server));
    expect(Array.from(plaintext)).toEqual(Array.from(bytes));
    expect(protectedHeader.cty).toBe('audio/wav');
    // Nobody else can read it.
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expect(compactDecrypt(answer.content, stranger)).rejects.toThrow();
  });
});
