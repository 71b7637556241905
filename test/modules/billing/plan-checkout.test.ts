// One open plan checkout per user: asking again for the same plan hands out
// the same page (no second checkout at the provider), another plan is 409
// naming the open one, concurrent requests open one between them, and once it
// expires (or fails to open) the next request opens a new one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const choose = (user: TestUser, plan: string) =>
  t.app.inject({ method: 'POST', url: '/api/billing/plan', headers: bearer(user.token), payload: { plan } });
const planSessions = async (user: TestUser) =>
  t.database.db
    .selectFrom('billing_sessions')
    .select(['id', 'status', 'plan_key'])
    .where('user_id', '=', user.id)
    .where('purpose', '=', 'plan')
    .execute();

describe('POST /api/billing/plan while a plan checkout is open', () => {
  it('the same plan again: the same checkout page; another plan: 409 naming the open one; once paid, a plan is live', async () => {
    const user = await createVerifiedUser(t);
    const first = await choose(user, 'starter');
    expect(first.statusCode).toBe(200);
    const again = await choose(user, 'starter');
    expect(again.statusCode).toBe(200);
    expect(again.json().url).toBe(first.json().url);
    const other = await choose(user, 'growth');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({
      code: 'conflict',
      url: first.json().url,
      plan: 'starter',
      expiresAt: expect.any(String),
    });
    expect(await planSessions(user)).toHaveLength(1);

    expect((await t.app.inject({ method: 'POST', url: new URL(first.json().url).pathname })).statusCode).toBeLessThan(
      400,
    );
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })).json().plan.key,
    ).toBe('starter');
    expect((await choose(user, 'growth')).statusCode).toBe(409); // a live plan: mode "upgrade" changes it
  });

  it('concurrent requests open one checkout between them', async () => {
    const user = await createVerifiedUser(t);
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => choose(user, 'growth')));
    for (const a of answers) expect([200, 409]).toContain(a.statusCode);
    const urls = new Set(answers.filter((a) => a.statusCode === 200).map((a) => a.json().url));
    expect(urls.size).toBe(1);
    expect(await planSessions(user)).toHaveLength(1);
    expect((await choose(user, 'growth')).json().url).toBe([...urls][0]);
  });

  it('an expired checkout no longer blocks: the next request opens a new one', async () => {
    const user = await createVerifiedUser(t);
    const first = await choose(user, 'starter');
    t.clock.advance(24 * 3600_000 + 1000);
    // The sign-in token has expired by now: the service is asked directly.
    const { url } = await t.services.billing.billing.choosePlan(user.id, { plan: 'growth' });
    expect(url).not.toBe(first.json().url);
    expect((await planSessions(user)).map((s) => [s.plan_key, s.status]).sort()).toEqual([
      ['growth', 'open'],
      ['starter', 'expired'],
    ]);
  });
});
