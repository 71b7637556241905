// The database remembers which master key and JWT secret it was used with
// (as HMACs, never the keys), on SQLite and PostgreSQL alike.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyMismatchError, hasMasterKeyCheck, verifyKeys } from '../../../src/modules/platform/key-check.js';
import { type TestApp, createTestApp } from '../../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('key checks', () => {
  it('records the keys on first start, accepts them after, refuses another master key and reports a new JWT secret', async () => {
    const store = t.services.platform.platformStore;
    const secrets = { masterKey: randomBytes(32), jwtSecret: randomBytes(32).toString('hex') };
    expect(await hasMasterKeyCheck(store)).toBe(false);
    expect(await verifyKeys(store, secrets, t.clock)).toEqual({ jwtSecretChanged: false });
    expect(await hasMasterKeyCheck(store)).toBe(true);
    expect(await verifyKeys(store, secrets, t.clock)).toEqual({ jwtSecretChanged: false });

    await expect(verifyKeys(store, { ...secrets, masterKey: randomBytes(32) }, t.clock)).rejects.toBeInstanceOf(
      KeyMismatchError,
    );

    const rotated = { ...secrets, jwtSecret: randomBytes(32).toString('hex') };
    expect(await verifyKeys(store, rotated, t.clock)).toEqual({ jwtSecretChanged: true });
    expect(await verifyKeys(store, rotated, t.clock)).toEqual({ jwtSecretChanged: false });

    const rows = await t.database.db.selectFrom('server_settings').selectAll().execute();
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(secrets.masterKey.toString('base64'));
    expect(stored).not.toContain(secrets.masterKey.toString('hex'));
    expect(stored).not.toContain(rotated.jwtSecret);
  });

  it('on a shared database refuses another JWT secret unless it is rotated on purpose', async () => {
    const other = await createTestApp();
    try {
      const store = other.services.platform.platformStore;
      const secrets = { masterKey: randomBytes(32), jwtSecret: 'a'.repeat(40) };
      const shared = { shared: true, rotate: false };
      expect(await verifyKeys(store, secrets, other.clock, shared)).toEqual({ jwtSecretChanged: false });
      const stranger = { ...secrets, jwtSecret: 'b'.repeat(40) };
      await expect(verifyKeys(store, stranger, other.clock, shared)).rejects.toThrow(
        /^JWT_SECRET is not the one this database was last used with/,
      );
      expect(await verifyKeys(store, secrets, other.clock, shared)).toEqual({ jwtSecretChanged: false }); // the refusal recorded nothing
      expect(await verifyKeys(store, stranger, other.clock, { shared: true, rotate: true })).toEqual({
        jwtSecretChanged: true,
      });
      await expect(verifyKeys(store, secrets, other.clock, shared)).rejects.toBeInstanceOf(KeyMismatchError);
      expect(await verifyKeys(store, stranger, other.clock, { shared: true, rotate: true })).toEqual({
        jwtSecretChanged: false,
      });
    } finally {
      await other.close();
    }
  });

  it('lets instances that start together agree on one master key check', async () => {
    const other = await createTestApp();
    try {
      const secrets = { masterKey: randomBytes(32), jwtSecret: 'x'.repeat(40) };
      const results = await Promise.allSettled(
        Array.from({ length: 4 }, () => verifyKeys(other.services.platform.platformStore, secrets, other.clock)),
      );
      expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
      const mixed = await Promise.allSettled([
        verifyKeys(other.services.platform.platformStore, secrets, other.clock),
        verifyKeys(other.services.platform.platformStore, { ...secrets, masterKey: randomBytes(32) }, other.clock),
      ]);
      expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    } finally {
      await other.close();
    }
  });
});
