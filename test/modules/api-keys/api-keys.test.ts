import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const createKey = (token: string, name = 'ci') =>
  t.app.inject({ method: 'PUT', url: '/api/api-keys', headers: bearer(token), payload: { name } });

describe('API keys', () => {
  it('returns the clear wsk_ key once and lists it masked', async () => {
    const user = await createVerifiedUser(t);
    const created = await createKey(user.token, 'deploy');
    expect(created.statusCode).toBe(200);
    const { id, name, key } = created.json();
    expect(name).toBe('deploy');
    expect(key).toMatch(/^wsk_[A-Za-z0-9_-]{43}$/);
    const list = await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(user.token) });
    expect(list.json()).toEqual([
      { id, name: 'deploy', key: `wsk_…${key.slice(-4)}`, createdAt: expect.any(String), lastUsedAt: null },
    ]);
    expect(JSON.stringify(list.json())).not.toContain(key);
  });

  it('stores only a hash of the key', async () => {
    const user = await createVerifiedUser(t);
    const { key } = (await createKey(user.token)).json();
    const rows = await t.database.db.selectFrom('api_keys').selectAll().where('user_id', '=', user.id).execute();
    expect(JSON.stringify(rows)).not.toContain(key.slice(4));
  });

  it('authenticates as its owner wherever a token does, and records lastUsedAt', async () => {
    const user = await createVerifiedUser(t);
    const { key } = (await createKey(user.token)).json();
    const res = await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(key) });
    expect(res.json()).toMatchObject({ status: 'ok', auth: { id: user.id } });
    const list = await t.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(key) });
    expect(list.json()[0].lastUsedAt).not.toBeNull();
  });

  it("inherits the owner's unverified phone: data-plane routes answer 403", async () => {
    const user = await registerUser(t);
    const { id, key } = (await createKey(user.token)).json();
    const res = await t.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: bearer(key) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('phone_not_verified');
  });

  it('DELETE revokes the key; it no longer authenticates', async () => {
    const user = await createVerifiedUser(t);
    const { id, key } = (await createKey(user.token)).json();
    const del = await t.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: bearer(user.token) });
    expect(del.statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(key) })).statusCode).toBe(401);
    const audit = await t.services.platform.audit.listForUser(user.id);
    expect(audit.map((a) => a.action)).toEqual(expect.arrayContaining(['api_key.create', 'api_key.delete']));
  });

  it("answers 404 for another user's key and leaves it working", async () => {
    const alice = await createVerifiedUser(t);
    const bob = await createVerifiedUser(t);
    const { id, key } = (await createKey(alice.token)).json();
    const res = await t.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: bearer(bob.token) });
    expect(res.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(key) })).statusCode).toBe(200);
  });

  it('refuses an unknown wsk_ key and an empty name', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer('wsk_nope') })).statusCode).toBe(401);
    const user = await createVerifiedUser(t);
    expect((await createKey(user.token, '')).statusCode).toBe(400);
  });
});
