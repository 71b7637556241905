// The NUL guard's fast path (issue 26): a JSON body is walked only when its
// text holds the `\u0000` escape, and the URL is tested once for `%00`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonTextMayHoldNul } from '../../src/http/input-guard.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(() => t.close());

describe('NUL guard fast path', () => {
  it('skips the walk only for JSON text without the escape, and still refuses the escape however it is written', async () => {
    expect(jsonTextMayHoldNul('{"name":"plain"}')).toBe(false);
    expect(jsonTextMayHoldNul('{"name":"a\\u0000b"}')).toBe(true);
    // An escaped backslash before u0000 is the text "\u0000", not NUL: the check is conservative, the walk decides.
    expect(jsonTextMayHoldNul('{"name":"a\\\\u0000b"}')).toBe(true);

    const put = (payload: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/api-keys',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        payload,
      });
    const literal = await put('{"name":"a\\\\u0000b"}');
    expect(literal.statusCode).toBeLessThan(300);
    for (const payload of ['{"name":"a\\u0000b"}', '{"name":"ok","\\u0000":"x"}', '{"name":"a\\\\\\u0000"}']) {
      const res = await put(payload);
      expect(res.statusCode, payload).toBe(400);
      expect(res.json(), payload).toEqual({
        message: 'body: text may not contain the NUL character (U+0000)',
        code: 'invalid_input',
      });
    }
    // The path is found through %00 whatever the body holds, and named first.
    const both = await t.app.inject({ method: 'DELETE', url: '/api/api-keys/a%00', headers: bearer(user.token) });
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toMatch(/^path: /);
  });
});
