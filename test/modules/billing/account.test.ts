// BillingAccount (what telephony, connect and calls use) over the ledger and
// the sandbox payment provider, on the test database (SQLite, or PostgreSQL
// with DATABASE_URL), including concurrent duplicates and two instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';

let t: TestApp;
let t2: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  t2 = await createTestApp({ shareDatabaseWith: t, clock: t.clock });
});
afterAll(async () => {
  await t2.close();
  await t.close();
});

const account = () => t.services.billing.account;
/**
 * The second instance for concurrent work. On PostgreSQL it is a second app on
 * the same schema; two SQLite connections in one process cannot overlap
 * transactions (better-sqlite3 waits for a lock synchronously, blocking the
 * holder), so on SQLite concurrent work runs on one instance, whose writes
 * the driver serializes, and the second instance is used in sequence.
 */
const peer = () => (process.env.DATABASE_URL ? t2 : t);
const pathOf = (url: string) => new URL(url).pathname;

/** Opens a sandbox top-up through the route and pays it; returns the checkout page path. */
async function topUp(token: string, usd = 20, pay = true): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/api/credits/add?amount=${usd}`, headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  const path = pathOf(res.json().url);
  if (pay) expect((await t.app.inject({ method: 'POST', url: path })).statusCode).toBe(200);
  return path;
}

async function saveCard(userId: string) {
  const url = await account().cardCheckoutUrl(userId);
  expect((await t.app.inject({ method: 'POST', url: pathOf(url) })).statusCode).toBe(200);
}

describe('credit ledger through the sandbox checkout', () => {
  it('a paid top-up credits the balance once, however often the page is submitted', async () => {
    const user = await createVerifiedUser(t);
    expect(await account().balanceCents(user.id)).toBe(0);
    const path = await topUp(user.token, 20);
    expect(await account().balanceCents(user.id)).toBe(2000);
    await t.app.inject({ method: 'POST', url: path });
    await t2.app.inject({ method: 'POST', url: path });
    expect(await account().balanceCents(user.id)).toBe(2000);
    const rows = await t.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', user.id).execute();
    expect(rows.map((r) => [r.reason, Number(r.cents)])).toEqual([['topup', 2000]]);
  });

  it('concurrent submits on two instances move the balance once', async () => {
    const user = await createVerifiedUser(t);
    const path = await topUp(user.token, 35.5, false);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? peer() : t).app.inject({ method: 'POST', url: path })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200));
    expect(await account().balanceCents(user.id)).toBe(3550);
  });

  it('an unpaid checkout changes nothing, and a page of another purpose cannot be paid as a portal', async () => {
    const user = await createVerifiedUser(t);
    const path = await topUp(user.token, 10, false);
    expect(await account().balanceCents(user.id)).toBe(0);
    expect((await t.app.inject({ method: 'GET', url: path.replace('checkout', 'portal') })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'POST', url: '/api/sandbox/checkout/bs_unknown' })).statusCode).toBe(404);
  });

  it('an expired checkout cannot be completed', async () => {
    const user = await createVerifiedUser(t);
    const path = await topUp(user.token, 10, false);
    t.clock.advance(25 * 3600_000);
    const res = await t.app.inject({ method: 'POST', url: path });
    expect(res.statusCode).toBe(409);
    expect(await account().balanceCents(user.id)).toBe(0);
  });
});

describe('reservations', () => {
  it('holds, settles the used part and returns the rest, once', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 20);
    await account().reserve(user.id, 500, 'call-1');
    expect(await account().balanceCents(user.id)).toBe(1500);
    await account().reserve(user.id, 500, 'call-1'); // retried: same hold
    expect(await account().balanceCents(user.id)).toBe(1500);
    await account().settle('call-1', 120);
    expect(await account().balanceCents(user.id)).toBe(1880);
    await account().settle('call-1', 120);
    await account().refund('call-1');
    expect(await account().balanceCents(user.id)).toBe(1880);
  });

  it('refund returns the whole hold; settling more than the hold or an unknown ref is refused', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 10);
    await account().reserve(user.id, 300, 'num-1');
    await expect(account().settle('num-1', 301)).rejects.toMatchObject({ code: 'invalid_input' });
    await account().refund('num-1');
    expect(await account().balanceCents(user.id)).toBe(1000);
    await expect(account().settle('nope', 1)).rejects.toMatchObject({ code: 'not_found' });
    await expect(account().reserve(user.id, 300, 'num-1')).resolves.toBeUndefined(); // the ref is spent: still the same (closed) hold
    expect(await account().balanceCents(user.id)).toBe(1000);
  });

  it('refuses a hold the balance does not cover (402) and a ref reused with other terms', async () => {
    const user = await createVerifiedUser(t);
    await expect(account().reserve(user.id, 1, 'r-empty')).rejects.toMatchObject({
      code: 'insufficient_funds',
      status: 402,
    });
    await topUp(user.token, 5);
    await account().reserve(user.id, 200, 'r-1');
    await expect(account().reserve(user.id, 300, 'r-1')).rejects.toMatchObject({ code: 'conflict' });
    await expect(account().reserve(user.id, 301, 'r-2')).rejects.toMatchObject({ code: 'insufficient_funds' });
    expect(await account().balanceCents(user.id)).toBe(300);
  });

  it('concurrent holds on two instances never overdraw the balance', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 20);
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? peer() : t).services.billing.account.reserve(user.id, 700, `c-${i}`),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect(r.reason.code).toBe('insufficient_funds');
    expect(await account().balanceCents(user.id)).toBe(600);
  });

  it('concurrent settles of one hold return the rest once', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 10);
    await account().reserve(user.id, 400, 'once');
    const other = peer().services.billing.account;
    await Promise.all([
      account().settle('once', 100),
      other.settle('once', 100),
      account().refund('once'),
      other.refund('once'),
    ]);
    const balance = await account().balanceCents(user.id);
    expect([900, 1000]).toContain(balance); // settled (100 kept) or refunded, never both
  });

  it('settleAbandoned returns old open holds whole and leaves recent ones', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 10);
    await account().reserve(user.id, 250, 'old');
    t.clock.advance(3600_000);
    await account().reserve(user.id, 250, 'new');
    expect(await account().settleAbandoned(30 * 60_000)).toBeGreaterThanOrEqual(1);
    expect(await account().balanceCents(user.id)).toBe(750);
    await account().settle('new', 50);
    expect(await account().balanceCents(user.id)).toBe(950);
  });
});

describe('cards and item subscriptions', () => {
  it('hasCard turns true after the card checkout', async () => {
    const user = await createVerifiedUser(t);
    expect(await account().hasCard(user.id)).toBe(false);
    const url = await account().cardCheckoutUrl(user.id);
    expect(url).toMatch(/\/api\/sandbox\/checkout\/bs_/);
    const page = await t.app.inject({ method: 'GET', url: pathOf(url) });
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('Save card');
    await saveCard(user.id);
    expect(await account().hasCard(user.id)).toBe(true);
  });

  it('a top-up also keeps the card on file', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user.token, 20);
    expect(await account().hasCard(user.id)).toBe(true);
  });

  it('startSubscription needs a card (409 with a checkout url), is idempotent by ref, and cancels once', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const item = { ref: `number:${user.id}:+15550001111`, description: 'Phone number +15550001111', monthlyCents: 115 };
    await expect(account().startSubscription(user.id, item)).rejects.toMatchObject({
      code: 'payment_method_required',
      extra: { url: expect.stringContaining('/api/sandbox/checkout/') },
    });
    await saveCard(user.id);
    const [a, b] = await Promise.all([
      account().startSubscription(user.id, item),
      peer().services.billing.account.startSubscription(user.id, item),
    ]);
    expect(a.subscriptionId).toBe(b.subscriptionId);
    await expect(account().startSubscription(other.id, item)).rejects.toMatchObject({ code: 'conflict' });
    await expect(account().cancelSubscription(other.id, a.subscriptionId)).rejects.toMatchObject({ code: 'not_found' });
    await account().cancelSubscription(user.id, a.subscriptionId);
    await account().cancelSubscription(user.id, a.subscriptionId);
    const row = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('id', '=', a.subscriptionId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'canceled', kind: 'item', ref: item.ref });
  });
});

describe('plans, periods and usage', () => {
  it('without a plan: calendar-month period and no allowance; usage is idempotent by ref and kind', async () => {
    const user = await createVerifiedUser(t);
    const period = await account().currentPeriod(user.id);
    expect(period.planKey).toBeNull();
    expect(new Date(period.start).getUTCDate()).toBe(1);
    expect(period.end).toBeGreaterThan(t.clock.now());
    await account().recordUsage(user.id, 'seconds_outbound', 90, 'call-a');
    await account().recordUsage(user.id, 'calls_outbound', 1, 'call-a');
    await account().recordUsage(user.id, 'seconds_outbound', 90, 'call-a');
    expect(await account().remainingAllowance(user.id, 'seconds_outbound')).toBe(0);
    expect(await account().allowances(user.id, ['seconds_outbound', 'calls_outbound'])).toEqual({
      period,
      remaining: { seconds_outbound: 0, calls_outbound: 0 },
    });
    const state = (
      await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })
    ).json();
    expect(state.usageRaw).toMatchObject({ seconds_outbound: 90, calls_outbound: 1 });
    expect(state.usage).toMatchObject({ seconds_outbound: 0, calls_outbound: 0 });
    await expect(account().recordUsage(user.id, 'leads', -1, 'x')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it("with a plan: the subscription's period, remaining allowance, usage clamped", async () => {
    const user = await createVerifiedUser(t);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/billing/plan',
      headers: bearer(user.token),
      payload: { plan: 'starter' },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: pathOf(res.json().url) })).statusCode).toBe(200);
    const period = await account().currentPeriod(user.id);
    expect(period).toEqual({ planKey: 'starter', start: t.clock.now(), end: expect.any(Number) });
    await account().recordUsage(user.id, 'leads', 60, 'job-1');
    await account().recordUsage(user.id, 'leads', 60, 'job-2');
    expect(await account().remainingAllowance(user.id, 'leads')).toBe(0);
    expect(await account().remainingAllowance(user.id, 'calls_inbound')).toBe(100);
    // Several kinds from one read: the same figures and the same period.
    await account().recordUsage(user.id, 'calls_inbound', 3, 'call-b');
    expect(await account().allowances(user.id, ['leads', 'calls_inbound'])).toEqual({
      period,
      remaining: { leads: 0, calls_inbound: 97 },
    });
    const state = (
      await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })
    ).json();
    expect(state).toMatchObject({
      plan: { key: 'starter', priceUsd: 29 },
      usage: { leads: 100 },
      usageRaw: { leads: 120 },
      hasCard: true,
    });
  });
});

describe('GET /api/credits cache (spec 8: 60 s)', () => {
  it('a change made on this instance shows at once; another instance may answer from memory for up to 60 s', async () => {
    const user = await createVerifiedUser(t);
    const credits = async (app: TestApp) =>
      (await app.app.inject({ method: 'GET', url: '/api/credits', headers: bearer(user.token) })).json().amount;
    expect(await credits(t2)).toBe(0); // t2 remembers 0
    await topUp(user.token, 20); // paid through t
    expect(await credits(t)).toBe(20);
    expect(await credits(t2)).toBe(0);
    t.clock.advance(59_000);
    expect(await credits(t2)).toBe(0);
    t.clock.advance(1_000);
    expect(await credits(t2)).toBe(20);
    // Money decisions never use the cache.
    await account().reserve(user.id, 500, `cache-${user.id}`);
    expect(await t2.services.billing.account.balanceCents(user.id)).toBe(1500);
  });
});
