// Deeply nested JSON used to reach the Idempotency-Key hash (a recursive
// canonical JSON) and die there with a RangeError: a 500. The body parser now
// refuses nesting deeper than MAX_JSON_DEPTH with 400 for every route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/http/json-body.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
let keys = 0;
const addCredits = (extra: string, idempotencyKey?: string) =>
  t.app.inject({
    method: 'POST',
    url: '/api/credits/add',
    headers: {
      ...bearer(user.token),
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    payload: `{"amount":10,"note":${extra}}`,
  });

describe('deeply nested JSON bodies', () => {
  it.each([5_000, 100_000])(
    'answers %i levels with an Idempotency-Key with 400 invalid_input, not 500',
    async (depth) => {
      const res = await addCredits(nested(depth), `deep-${depth}-${++keys}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_input' });
      expect(res.json().message).toContain(`${MAX_JSON_DEPTH} levels`);
    },
  );

  it('answers the same without the header, and on unauthenticated routes', async () => {
    expect((await addCredits(nested(5_000))).statusCode).toBe(400);
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: `{"email":${nested(3_000)}}`,
    });
    expect(login.statusCode).toBe(400);
    expect(login.json().code).toBe('invalid_input');
  });

  it('still takes a body nested exactly MAX_JSON_DEPTH levels, with the key (the hash copes)', async () => {
    // The body object itself is level 1.
    const res = await addCredits(nested(MAX_JSON_DEPTH - 1), `ok-${++keys}`);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('counts depth without recursing (no overflow on a million levels)', () => {
    let deep: unknown = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: {} }] }, 3)).toBe(true);
  });
});
