// A lead job that is still streaming is never recovered as abandoned: it
// stamps a heartbeat while it runs, and recovery (on any instance) settles only
// jobs whose heartbeat is stale. A job recovered anyway (its instance stalled,
// or its clock is behind) stops streaming: nothing is delivered beyond what
// recovery charged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { MemoryBillingAccount } from '../../support/billing-memory.js';
import { type ConnectorFake, fakeRecord, startConnectorFake } from '../../support/connector-fake.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client } from '../data/support.js';
import { eventually } from '../events/support.js';
import { recordsOf } from './support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fake: ConnectorFake;
beforeAll(async () => {
  fake = await startConnectorFake();
});
afterAll(async () => {
  await fake.close();
});

/** Two instances on one database (A streams, B recovers), A's heartbeat every 50 ms of real time. */
async function twoInstances(clockA: ManualClock, clockB: ManualClock, billing: MemoryBillingAccount) {
  const env = { CONNECTOR_URL: fake.url, LEAD_PRICE_USD: '0.50' };
  const connector = {
    ...loadConfig({ NODE_ENV: 'test', DATA_DIR: '/tmp', ...env }).connector,
    heartbeatMs: 50,
    staleAfterMs: 60_000,
  };
  const a = await createTestApp({ clock: clockA, billing, env, config: { connector } });
  const b = await createTestApp({
    clock: clockB,
    billing,
    env,
    config: { connector },
    shareDatabaseWith: { dir: a.dir, pgSchema: a.pgSchema, secrets: a.secrets },
  });
  return { a, b, close: async () => (await b.close(), await a.close()) };
}

const deliveredOf = async (t: TestApp, userId: string) =>
  (await t.database.db.selectFrom('connect_jobs').select('delivered').where('user_id', '=', userId).executeTakeFirst())
    ?.delivered;

describe('lead job heartbeat', () => {
  it('a job streaming past the old 10-minute mark (its connector paused) is not recovered; it is charged once for all it delivered', async () => {
    const clock = new ManualClock();
    const billing = new MemoryBillingAccount(clock);
    const { a, b, close } = await twoInstances(clock, clock, billing);
    try {
      const user = await createVerifiedUser(a);
      billing.fund(user.id, 1000);
      const running = a.services.connect.jobs.run(
        user.id,
        {
          repository: 'contacts',
          path: '/get-leads',
          params: { credits: 6, format: 'ndjson', pauseAfter: 3, pauseMs: 2000 },
        },
        new AbortController().signal,
      );
      await eventually(async () => Number(await deliveredOf(a, user.id)) === 3, 10_000, 'three leads written');
      // Eleven minutes pass while the connector is silent (within its own idle timeout); A's heartbeat goes on.
      clock.advance(11 * 60_000);
      await sleep(200);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);
      const [ref] = [...billing.holds.keys()];
      expect(billing.holds.get(ref)).toMatchObject({ cents: 300, state: 'open' });

      const result = await running;
      expect(result).toMatchObject({ written: 6, credits: 6, failure: null });
      expect(billing.holds.get(ref)).toMatchObject({ state: 'settled', keptCents: 300 });
      expect(billing.usedOf(user.id, 'leads')).toBe(6);
      expect(await billing.balanceCents(user.id)).toBe(1000 - 300);
      // Later passes change nothing.
      clock.advance(60 * 60_000);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);
      expect(await billing.balanceCents(user.id)).toBe(1000 - 300);
    } finally {
      await close();
    }
  });

  it('a job whose heartbeat is stale is recovered for what it delivered; the stalled stream then stops and delivers nothing more', async () => {
    const clockA = new ManualClock();
    const clockB = new ManualClock(clockA.now());
    const billing = new MemoryBillingAccount(clockA);
    const { a, b, close } = await twoInstances(clockA, clockB, billing);
    try {
      const user = await createVerifiedUser(a);
      billing.fund(user.id, 1000);
      const running = a.services.connect.jobs.run(
        user.id,
        {
          repository: 'contacts',
          path: '/get-leads',
          params: { credits: 10, format: 'ndjson', pauseAfter: 3, pauseMs: 2000 },
        },
        new AbortController().signal,
      );
      await eventually(async () => Number(await deliveredOf(a, user.id)) === 3, 10_000, 'three leads written');
      // Within the stale limit B leaves it; past it (A's stamps are in A's clock, which stands still), B settles it.
      clockB.advance(59_000);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);
      clockB.advance(2_000);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(1);
      const [ref] = [...billing.holds.keys()];
      expect(billing.holds.get(ref)).toMatchObject({ cents: 500, state: 'settled', keptCents: 150 });
      expect(await billing.balanceCents(user.id)).toBe(1000 - 150);

      // A's next heartbeat finds its job settled: the stream stops, nothing more is written or charged.
      const result = await running;
      expect(result.written).toBe(3);
      expect(result.failure).toMatch(/settled by recovery/);
      expect(billing.holds.get(ref)).toMatchObject({ state: 'settled', keptCents: 150 });
      expect(billing.usedOf(user.id, 'leads')).toBe(3);
      await sleep(2200);
      const { records } = await recordsOf(client(a, user), 'contacts');
      expect(records).toEqual([0, 1, 2].map((i) => fakeRecord(i, '/get-leads')));
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);
    } finally {
      await close();
    }
  });
});
