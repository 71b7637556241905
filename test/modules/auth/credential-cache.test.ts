import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { CredentialCache } from '../../../src/modules/auth/credential-cache.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';

describe('CredentialCache', () => {
  it('keeps an entry for ttlMs', () => {
    const clock = new ManualClock(0);
    const cache = new CredentialCache<string>(clock, 1000);
    cache.set('a', 'u1', 'A');
    clock.advance(999);
    expect(cache.get('a')).toBe('A');
    clock.advance(1);
    expect(cache.get('a')).toBeUndefined();
  });

  it('forgets every entry of a changed user and only theirs', () => {
    const cache = new CredentialCache<string>(new ManualClock(0), 1000);
    cache.set('jwt:1', 'u1', 'one');
    cache.set('key:2', 'u1', 'two');
    cache.set('jwt:3', 'u2', 'three');
    cache.userChanged('u1');
    expect([cache.get('jwt:1'), cache.get('key:2'), cache.get('jwt:3')]).toEqual([undefined, undefined, 'three']);
  });

  it('drops the oldest entry when full, and keeps nothing with a ttl of 0', () => {
    const cache = new CredentialCache<number>(new ManualClock(0), 1000, 2);
    cache.set('a', 'u', 1);
    cache.set('b', 'u', 2);
    cache.set('c', 'u', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3]);
    const off = new CredentialCache<number>(new ManualClock(0), 0);
    off.set('a', 'u', 1);
    expect(off.get('a')).toBeUndefined();
  });
});

// Two instances on one database: what each sees of the other's revocations.
describe('credential lookups across instances', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp();
    b = await createTestApp({ shareDatabaseWith: a, clock: a.clock });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  const status = (t: TestApp, token: string) =>
    t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(token) }).then((r) => r.statusCode);

  it('a logout on one instance reaches the other within AUTH_CACHE_MS', async () => {
    const user = await createVerifiedUser(a);
    expect(await status(b, user.token)).toBe(200); // b has now looked the session up
    expect(
      (await a.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(user.token) })).statusCode,
    ).toBe(200);
    expect(await status(a, user.token)).toBe(401); // at once where it happened
    expect(await status(b, user.token)).toBe(200); // b still trusts its lookup…
    a.clock.advance(a.config.authCacheMs);
    expect(await status(b, user.token)).toBe(401); // …for AUTH_CACHE_MS at most
  });

  it('a deleted API key stops working on the other instance within AUTH_CACHE_MS', async () => {
    const user = await createVerifiedUser(a);
    const { id, key } = (
      await a.app.inject({ method: 'PUT', url: '/api/api-keys', headers: bearer(user.token), payload: { name: 'ci' } })
    ).json();
    expect(await status(b, key)).toBe(200);
    expect(
      (await a.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: bearer(user.token) })).statusCode,
    ).toBeLessThan(300);
    expect(await status(a, key)).toBe(401);
    a.clock.advance(a.config.authCacheMs);
    expect(await status(b, key)).toBe(401);
  });

  it('with AUTH_CACHE_MS=0 every request reads the session', async () => {
    const c = await createTestApp({ shareDatabaseWith: a, clock: a.clock, config: { authCacheMs: 0 } });
    try {
      const user = await createVerifiedUser(a);
      expect(await status(c, user.token)).toBe(200);
      await a.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(user.token) });
      expect(await status(c, user.token)).toBe(401);
    } finally {
      await c.close();
    }
  });
});
