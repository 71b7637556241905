// Two instances on one PostgreSQL (DATABASE_URL; skipped on SQLite, where
// one server holds the data folder and so is the only dialer) dial one campaign at once: together they keep its pacing and
// its concurrency cap, and no contact is dialled twice. A claim left by an
// instance that stopped before its call was recorded goes back within the
// lease and is dialled once by the other.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { callConfig } from '../calls/support.js';
import { caller, createCampaign, post, untilNoneCalling } from './support.js';

let a: TestApp;
let b: TestApp;
const MONDAY = Date.parse('2026-12-07T10:00:00Z');
beforeEach(async () => {
  // Calls ring, talk and end in about 0.4 s of real time.
  // The account may have many calls at once: the campaign's own cap is what is tested.
  const env = { CALL_CONCURRENCY_PER_USER: '200' };
  a = await createTestApp({ env, config: callConfig({ sandboxStepMs: 100 }), clock: new ManualClock(MONDAY) });
  b = await createTestApp({ env, config: callConfig({ sandboxStepMs: 100 }), clock: a.clock, shareDatabaseWith: a });
});
afterEach(async () => {
  await b.close();
  await a.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const phones = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `C${i}`, phone: `+1415556${String(1000 + i).padStart(4, '0')}` }));

async function counts(id: string) {
  const rows = await a.database.db
    .selectFrom('campaign_contacts')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('campaign_id', '=', id)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
}
const attempts = (id: string) =>
  a.database.db.selectFrom('campaign_attempts').selectAll().where('campaign_id', '=', id).execute();

/** Both instances' dialers at the same moment. */
const bothRound = () => Promise.all([a.services.campaigns.dialer.round(), b.services.campaigns.dialer.round()]);

// Calls end in real time: on a loaded machine (the real-time files all at once) these took 30-45 s.
describe.runIf(process.env.DATABASE_URL)('two instances', { timeout: 120_000 }, () => {
  it('hold the concurrency cap together and dial each contact once', async () => {
    const c = await caller(a, 200);
    const id = await createCampaign(a, c, { contacts: phones(24), pacing: { callsPerMinute: 600, maxConcurrent: 4 } });
    expect((await post(a, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    let most = 0;
    for (let step = 0; step < 600; step++) {
      await bothRound();
      const now = await counts(id);
      most = Math.max(most, now.calling ?? 0);
      expect(now.calling ?? 0).toBeLessThanOrEqual(4);
      if ((now.completed ?? 0) === 24) break;
      a.clock.advance(100);
      await sleep(40);
    }
    await a.services.campaigns.dialer.settled();
    await b.services.campaigns.dialer.settled();
    await untilNoneCalling(a);
    expect(most).toBe(4);
    const all = await attempts(id);
    expect(all).toHaveLength(24);
    expect(new Set(all.map((x) => x.idx)).size).toBe(24);
    expect(new Set(all.map((x) => x.session_id)).size).toBe(24);
  });

  it('keep the pacing together: 600 a minute is one dial each 100 ms, whichever instance dials', async () => {
    const c = await caller(a, 200);
    const id = await createCampaign(a, c, {
      contacts: phones(40),
      pacing: { callsPerMinute: 600, maxConcurrent: 100 },
    });
    await post(a, c.user, `/api/campaigns/${id}/start`);
    const started = a.clock.now();
    for (let step = 0; step < 30; step++) {
      await bothRound();
      const dialled = (await attempts(id)).length;
      // By time t (ms) at most t / 100 + 1 dials: the slot pointer is shared, whichever instance takes it.
      expect(dialled).toBeLessThanOrEqual(Math.floor((a.clock.now() - started) / 100) + 1);
      a.clock.advance(100);
    }
    await a.services.campaigns.dialer.settled();
    await b.services.campaigns.dialer.settled();
    // 30 rounds 100 ms apart: 30 slots came due, each taken once. A claim the calls area refuses for a passing reason
    // (two instances' starts racing for the account's charges: 409) gives its slot up, so a loaded machine may place 29.
    const placed = (await attempts(id)).length;
    expect(placed).toBeGreaterThanOrEqual(28);
    expect(placed).toBeLessThanOrEqual(30);
    await untilNoneCalling(a);
  });

  it("give a stopped instance's claim back after its lease, and the other instance dials it once", async () => {
    const c = await caller(a, 200);
    const id = await createCampaign(a, c, { contacts: phones(1), pacing: { callsPerMinute: 60 } });
    await post(a, c.user, `/api/campaigns/${id}/start`);
    // An instance claimed the contact and stopped before its call was recorded.
    const now = a.clock.now();
    await a.database.db
      .updateTable('campaign_contacts')
      .set({ status: 'calling', claimed_by: 'instance_gone', claimed_until: now + 60_000, attempt_count: 1 })
      .where('campaign_id', '=', id)
      .execute();
    await bothRound();
    expect(await attempts(id)).toHaveLength(0);
    a.clock.advance(61_000);
    await bothRound();
    // The sweep ran and gave it back: the next rounds dial it, once.
    a.clock.advance(1000);
    await bothRound();
    await a.services.campaigns.dialer.settled();
    await b.services.campaigns.dialer.settled();
    await untilNoneCalling(a);
    const all = await attempts(id);
    expect(all).toHaveLength(1);
    expect(all[0]!.attempt).toBe(1);
    expect((await counts(id)).completed).toBe(1);
  });
});
