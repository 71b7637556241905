import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, registerUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const count = async (table: 'revoked_tokens' | 'phone_codes' | 'password_resets' | 'rate_limits' | 'oauth_states') =>
  Number(
    (
      await t.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('housekeeping', () => {
  it('deletes expired revocations, codes, reset tokens, sign-in flows and old rate-limit windows, and keeps live ones', async () => {
    const user = await registerUser(t);
    await t.app.inject({ method: 'POST', url: '/api/auth/verify/request', headers: bearer(user.token) });
    await t.app.inject({ method: 'POST', url: '/api/auth/reset-password/request', payload: { email: user.email } });
    await t.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(user.token) });
    await t.database.db
      .insertInto('oauth_states')
      .values({
        state: 's1',
        provider: 'p',
        code_verifier: 'v',
        nonce: 'n',
        return_to: null,
        attach_user_id: null,
        expires_at: t.clock.now() + 600_000,
      })
      .execute();
    expect(await count('revoked_tokens')).toBe(1);
    expect(await count('phone_codes')).toBe(1);
    expect(await count('password_resets')).toBe(1);
    expect(await count('rate_limits')).toBeGreaterThan(0);

    await t.services.housekeeping.runOnce();
    expect(await count('revoked_tokens')).toBe(1);
    expect(await count('phone_codes')).toBe(1);
    expect(await count('oauth_states')).toBe(1);
    expect(await count('password_resets')).toBe(1);

    t.clock.advance(2 * 24 * 3600_000);
    await t.services.housekeeping.runOnce();
    expect(await count('revoked_tokens')).toBe(0);
    expect(await count('phone_codes')).toBe(0);
    expect(await count('password_resets')).toBe(0);
    expect(await count('oauth_states')).toBe(0);
    expect(await count('rate_limits')).toBe(0);
  });
});
