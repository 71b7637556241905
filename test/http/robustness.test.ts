// Hostile and malformed requests: every answer keeps { message, code } with a
// 4xx, on SQLite and PostgreSQL alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsNul } from '../../src/http/input-guard.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

describe('NUL characters', () => {
  it('are refused with 400 invalid_input in a path parameter, a query string, a body value and a body key', async () => {
    const requests = [
      { method: 'GET', url: '/api/objects/%00' },
      { method: 'GET', url: '/api/objects/a%00b/related' },
      { method: 'DELETE', url: '/api/api-keys/%00' },
      { method: 'GET', url: '/api/objects/x/related?after=%00' },
      { method: 'GET', url: '/api/events/all?object_id=a%00' },
      { method: 'PUT', url: '/api/api-keys', payload: { name: 'a\u0000b' } },
      { method: 'PUT', url: '/api/objects', payload: { type: 'calls', data: 'aa', 'k\u0000': 1 } },
    ] as const;
    for (const r of requests) {
      const res = await t.app.inject({ ...r, headers: bearer(user.token) });
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(400);
      expect(res.json(), `${r.method} ${r.url}`).toEqual({ message: expect.stringContaining('NUL'), code: 'invalid_input' });
    }
  });

  it('are found in nested values and keys, not in buffers, and cycles end the walk', () => {
    expect(holdsNul({ a: [{ b: 'x\u0000' }] })).toBe(true);
    expect(holdsNul({ a: { 'x\u0000': 1 } })).toBe(true);
    expect(holdsNul(Buffer.from([0, 0]))).toBe(false);
    expect(holdsNul(Object.assign(Object.create(Object.create(null)), { id: '\u0000' }))).toBe(true);
    const cyclic: Record<string, unknown> = { a: 'ok' };
    cyclic.self = cyclic;
    expect(holdsNul(cyclic)).toBe(false);
    expect(holdsNul(Array.from({ length: 300_000 }, () => 'x'))).toBe(false);
  });
});
