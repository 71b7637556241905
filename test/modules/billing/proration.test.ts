// A plan change mid-period counts as the provider prorates its price: the new
// plan's allowance for the rest of the period only. Upgrading and then
// downgrading at once yields no more included quantity than was paid for.
// Runs on the sandbox provider (its upgrade page reports the change as
// Stripe's customer.subscription.updated does).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

// The service is asked directly: the clock moves by weeks, past any sign-in token's life.
async function choose(user: TestUser, plan: string, mode?: 'upgrade') {
  const { url } = await t.services.billing.billing.choosePlan(user.id, { plan, mode });
  const done = await t.app.inject({ method: 'POST', url: new URL(url).pathname });
  expect(done.statusCode).toBeLessThan(400);
}
const state = async (user: TestUser) => JSON.parse(JSON.stringify(await t.services.billing.billing.state(user.id)));
const remaining = (user: TestUser) => t.services.billing.account.remainingAllowance(user.id, 'leads');

describe('plan changes mid-period', () => {
  it('upgrade halfway gives half the new allowance; downgrading at once leaves no more than was paid for', async () => {
    const user = await createVerifiedUser(t);
    await choose(user, 'starter'); // 100 leads a period
    const { period } = await state(user);
    const length = Date.parse(period.end) - Date.parse(period.start);
    expect(await remaining(user)).toBe(100);

    t.clock.set(Date.parse(period.start) + length / 2);
    await choose(user, 'scale', 'upgrade'); // 5,000 leads a period, half the period left
    expect((await state(user)).plan.key).toBe('scale');
    expect(await remaining(user)).toBe(50 + 2500);
    expect((await state(user)).plan.included.leads).toBe(2550);

    // Use all of it, then downgrade at once: nothing more appears.
    await t.services.billing.account.recordUsage(user.id, 'leads', 2550, `test:leads:${user.id}`);
    await choose(user, 'starter', 'upgrade');
    expect((await state(user)).plan.key).toBe('starter');
    expect(await remaining(user)).toBe(0);
    const paidFor = 100 + (5000 - 100) / 2; // starter's period plus the prorated difference for the half upgraded
    expect((await state(user)).usageRaw.leads).toBeLessThanOrEqual(paidFor);
  });

  it("upgrade and downgrade at once, with nothing used: the allowance is the starting plan's", async () => {
    const user = await createVerifiedUser(t);
    await choose(user, 'starter');
    const { period } = await state(user);
    t.clock.set(Date.parse(period.start) + (Date.parse(period.end) - Date.parse(period.start)) / 4);
    await choose(user, 'growth', 'upgrade');
    expect(await remaining(user)).toBe(25 + 750);
    await choose(user, 'starter', 'upgrade');
    expect(await remaining(user)).toBe(100);
  });
});
