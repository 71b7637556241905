// The single-use token ledger: of any number of concurrent spenders, on one
// instance or two sharing the database, exactly one wins.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await createTestApp();
  b = await createTestApp({ shareDatabaseWith: a, clock: a.clock });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const later = () => a.clock.now() + 60_000;

describe('SingleUseTokens', () => {
  it('lets exactly one of 20 concurrent spends across two instances win', async () => {
    const jti = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).services.platform.singleUse.spend('phone-price', jti, later()),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('keeps purposes apart, and names built from parts cannot collide with a joined string', async () => {
    const id = randomUUID();
    expect(await a.services.platform.singleUse.spend('phone-price', id, later())).toBe(true);
    expect(await a.services.platform.singleUse.spend('signed-payload', id, later())).toBe(true);
    expect(await a.services.platform.singleUse.spend('signed-payload', ['u1', 'srv:x', id], later())).toBe(true);
    expect(await a.services.platform.singleUse.spend('signed-payload', ['u1:srv', 'x', id], later())).toBe(true);
    expect(await a.services.platform.singleUse.spend('signed-payload', ['u1', 'srv:x', id], later())).toBe(false);
  });

  it('restores a spent token so it can be spent again, once', async () => {
    const jti = randomUUID();
    expect(await a.services.platform.singleUse.spend('phone-price', jti, later())).toBe(true);
    await b.services.platform.singleUse.restore('phone-price', jti);
    const again = await Promise.all([
      a.services.platform.singleUse.spend('phone-price', jti, later()),
      b.services.platform.singleUse.spend('phone-price', jti, later()),
    ]);
    expect(again.filter(Boolean)).toHaveLength(1);
  });

  it('forgets a token only after its expiry', async () => {
    const jti = randomUUID();
    const expiresAt = later();
    await a.services.platform.singleUse.spend('temporary-session', jti, expiresAt);
    await a.services.platform.singleUse.purgeExpired(expiresAt - 1);
    expect(await a.services.platform.singleUse.spend('temporary-session', jti, expiresAt)).toBe(false);
    await a.services.platform.singleUse.purgeExpired(expiresAt + 1);
    expect(await a.services.platform.singleUse.spend('temporary-session', jti, expiresAt)).toBe(true);
  });
});
