// /get-leads: credits clamped to allowance plus what the balance buys, the paid
// part reserved before streaming, only delivered leads charged, the rest
// returned on completion and on failure, and jobs cut off by a crash settled
// by the next instance's start-up recovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { reservationRef } from '../../../src/modules/connect/service.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { MemoryBillingAccount } from '../../support/billing-memory.js';
import { type ConnectorFake, fakeRecord, startConnectorFake } from '../../support/connector-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { client } from '../data/support.js';
import { eventually } from '../events/support.js';
import { recordsOf } from './support.js';

const PRICE = 50; // LEAD_PRICE_USD=0.50

describe('POST /api/connect on /get-leads', () => {
  let t: TestApp;
  let fake: ConnectorFake;
  let billing: MemoryBillingAccount;
  const clock = new ManualClock();
  beforeAll(async () => {
    fake = await startConnectorFake();
    billing = new MemoryBillingAccount(clock);
    t = await createTestApp({ clock, billing, env: { CONNECTOR_URL: fake.url, LEAD_PRICE_USD: '0.50' } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const leads = (user: TestUser, params: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/connect',
      headers: { ...bearer(user.token), ...headers },
      payload: { repository: 'contacts', path: '/get-leads', params: { format: 'ndjson', ...params } },
    });
  const holdOf = (userId: string) => [...billing.holds.entries()].filter(([, h]) => h.userId === userId);

  it('clamps credits to the allowance plus what the balance buys; reserves the paid part; charges what was delivered', async () => {
    const user = await createVerifiedUser(t);
    billing.include(user.id, 'leads', 3);
    billing.fund(user.id, 5 * PRICE + 30); // buys 5 leads, 30 cents left over
    // The connector sends 5 more than asked: only the granted credits are written.
    const res = await leads(user, { credits: 20, extra: 5 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('8');
    expect(res.headers['x-objects-written']).toBe('8');
    expect(fake.requests.at(-1)!.params.credits).toBe(8);
    const [[ref, hold]] = holdOf(user.id);
    expect(ref).toMatch(/^connect:/);
    expect(hold).toMatchObject({ cents: 5 * PRICE, state: 'settled', keptCents: 5 * PRICE });
    expect(await billing.balanceCents(user.id)).toBe(30);
    expect(billing.usedOf(user.id, 'leads')).toBe(8);
    expect(await billing.remainingAllowance(user.id, 'leads')).toBe(0);
    const { records } = await recordsOf(client(t, user), 'contacts');
    expect(records).toEqual(Array.from({ length: 8 }, (_, i) => fakeRecord(i, '/get-leads')));
  });

  it('within the allowance nothing is reserved or charged', async () => {
    const user = await createVerifiedUser(t);
    billing.include(user.id, 'leads', 10);
    const res = await leads(user, { credits: 4 });
    expect(res.headers['x-credits-granted']).toBe('4');
    expect(res.headers['x-objects-written']).toBe('4');
    expect(holdOf(user.id)).toHaveLength(0);
    expect(billing.usedOf(user.id, 'leads')).toBe(4);
    expect(await billing.remainingAllowance(user.id, 'leads')).toBe(6);
  });

  it('a stream that delivers fewer leads than granted is charged for those only; the allowance is used first', async () => {
    const user = await createVerifiedUser(t);
    billing.include(user.id, 'leads', 2);
    billing.fund(user.id, 1000);
    const res = await leads(user, { credits: 10, extra: -6 }); // the connector has only 4
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('10');
    expect(res.headers['x-objects-written']).toBe('4');
    const [[, hold]] = holdOf(user.id);
    expect(hold).toMatchObject({ cents: 8 * PRICE, state: 'settled', keptCents: 2 * PRICE });
    expect(await billing.balanceCents(user.id)).toBe(1000 - 2 * PRICE);
    expect(billing.usedOf(user.id, 'leads')).toBe(4);
  });

  it('a connector failure mid-stream charges the delivered leads and returns the rest of the hold', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, 1000);
    const res = await leads(user, { credits: 10, failAfter: 4 });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'provider_error', written: 4, credits: 10 });
    const [[, hold]] = holdOf(user.id);
    expect(hold).toMatchObject({ cents: 10 * PRICE, state: 'settled', keptCents: 4 * PRICE });
    expect(await billing.balanceCents(user.id)).toBe(1000 - 4 * PRICE);
    expect(billing.usedOf(user.id, 'leads')).toBe(4);
  });

  it('a connector that sends no leads: the whole hold is refunded, no usage', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, 1000);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/connect',
      headers: bearer(user.token),
      payload: { repository: 'contacts', path: '/get-leads', params: { credits: 3, format: 'ndjson', extra: -3 } },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-objects-written']).toBe('0');
    const [[, hold]] = holdOf(user.id);
    expect(hold.state).toBe('refunded');
    expect(await billing.balanceCents(user.id)).toBe(1000);
    expect(billing.usedOf(user.id, 'leads')).toBe(0);
  });

  it('a charge that fails keeps the answer; recovery finishes it later, once', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, 1000);
    billing.failNextClose = true;
    const res = await leads(user, { credits: 4 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-objects-written']).toBe('4');
    const [[ref, hold]] = holdOf(user.id);
    expect(hold.state).toBe('open');
    const job = await t.database.db
      .selectFrom('connect_jobs')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    // SQLite keeps the claim (settling); on PostgreSQL the claim rolled back with the failed charge (running).
    expect(job).toMatchObject({ state: t.database.dialect === 'sqlite' ? 'settling' : 'running', delivered: 4 });
    // Not yet abandoned: recovery leaves it; later it charges the 4 delivered, and a second pass changes nothing.
    expect(await t.services.connect.jobs.recoverAbandoned()).toBe(0);
    clock.advance(11 * 60_000);
    expect(await t.services.connect.jobs.recoverAbandoned()).toBe(1);
    expect(billing.holds.get(ref)).toMatchObject({ state: 'settled', keptCents: 4 * PRICE });
    expect(await t.services.connect.jobs.recoverAbandoned()).toBe(0);
    expect(await billing.balanceCents(user.id)).toBe(1000 - 4 * PRICE);
    expect(billing.usedOf(user.id, 'leads')).toBe(4);
    expect(
      (
        await t.database.db
          .selectFrom('connect_jobs')
          .select('state')
          .where('id', '=', job.id)
          .executeTakeFirstOrThrow()
      ).state,
    ).toBe('settled');
  });

  it('no allowance and no balance: 204 at once, nothing streamed, nothing held', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, PRICE - 1); // not enough for one lead
    const calls = fake.requests.length;
    const res = await leads(user, { credits: 5 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('0');
    expect(res.headers['x-objects-written']).toBe('0');
    expect(fake.requests.length).toBe(calls);
    expect(holdOf(user.id)).toHaveLength(0);
  });

  it('params.credits must be a whole number', async () => {
    const user = await createVerifiedUser(t);
    for (const credits of [undefined, -1, 2.5, '3']) {
      const res = await leads(user, { credits });
      expect(res.statusCode, String(credits)).toBe(400);
      expect(res.json().message).toContain('params.credits');
    }
  });

  it('concurrent requests share one allowance: together they never get more free leads than it has', async () => {
    const user = await createVerifiedUser(t);
    billing.include(user.id, 'leads', 5);
    billing.slowReads = true; // reads take a turn of the event loop, so the requests' grants overlap
    const answers = await Promise.all([1, 2, 3].map(() => leads(user, { credits: 5 }))).finally(
      () => (billing.slowReads = false),
    );
    const granted = answers.map((a) => Number(a.headers['x-credits-granted']));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(5);
    expect(billing.usedOf(user.id, 'leads')).toBe(5);
    expect((await recordsOf(client(t, user), 'contacts')).children).toHaveLength(5);
  });

  it('concurrent paid requests never hold more than the balance: a late one gets fewer credits or 402', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, 5 * PRICE);
    billing.slowReads = true;
    const answers = await Promise.all([1, 2, 3].map(() => leads(user, { credits: 5 }))).finally(
      () => (billing.slowReads = false),
    );
    for (const a of answers) expect([204, 402]).toContain(a.statusCode);
    const written = answers
      .filter((a) => a.statusCode === 204)
      .reduce((n, a) => n + Number(a.headers['x-objects-written']), 0);
    expect(written).toBe(5);
    for (const a of answers.filter((x) => x.statusCode === 402)) expect(a.json().code).toBe('insufficient_funds');
    expect(await billing.balanceCents(user.id)).toBe(0);
    expect(billing.usedOf(user.id, 'leads')).toBe(5);
    // A refused request's job is closed: nothing left for recovery.
    expect(
      await t.database.db
        .selectFrom('connect_jobs')
        .select('id')
        .where('user_id', '=', user.id)
        .where('state', '=', 'running')
        .execute(),
    ).toHaveLength(0);
  });

  it('Idempotency-Key: a retried /get-leads is not streamed or charged twice', async () => {
    const user = await createVerifiedUser(t);
    billing.fund(user.id, 1000);
    const calls = fake.requests.length;
    const first = await leads(user, { credits: 3 }, { 'idempotency-key': 'leads-1' });
    const retry = await leads(user, { credits: 3 }, { 'idempotency-key': 'leads-1' });
    expect([first.statusCode, retry.statusCode]).toEqual([204, 204]);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(fake.requests.length).toBe(calls + 1);
    expect(holdOf(user.id)).toHaveLength(1);
    expect(await billing.balanceCents(user.id)).toBe(1000 - 3 * PRICE);
    expect(billing.usedOf(user.id, 'leads')).toBe(3);
  });
});

describe('crash between reserve and settle', () => {
  it('the next instance settles the abandoned job at start, charging only what it had delivered', async () => {
    const fake = await startConnectorFake();
    const clockA = new ManualClock();
    const billing = new MemoryBillingAccount(clockA); // the ledger outlives instances, as billing's tables do
    const env = { CONNECTOR_URL: fake.url };
    const a = await createTestApp({ clock: clockA, billing, env });
    const clockB = new ManualClock(clockA.now());
    const b = await createTestApp({
      clock: clockB,
      billing,
      env,
      shareDatabaseWith: { dir: a.dir, pgSchema: a.pgSchema, secrets: a.secrets },
    });
    try {
      const user = await createVerifiedUser(a);
      billing.fund(user.id, 1000);
      // Instance A reserves 10 leads, writes 3, and then its connector goes quiet: A "crashes" here.
      const stopA = new AbortController();
      const running = a.services.connect.jobs.run(
        user.id,
        { repository: 'contacts', path: '/get-leads', params: { credits: 10, format: 'ndjson', hangAfter: 3 } },
        stopA.signal,
      );
      await eventually(
        async () =>
          (
            await a.database.db
              .selectFrom('connect_jobs')
              .select('delivered')
              .where('user_id', '=', user.id)
              .executeTakeFirst()
          )?.delivered === 3,
        10_000,
        'three leads written',
      );
      const [ref] = [...billing.holds.keys()];
      expect(billing.holds.get(ref)).toMatchObject({ cents: 500, state: 'open' });

      // B starts while A's job is recent: it is not touched.
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);
      expect(billing.holds.get(ref)!.state).toBe('open');
      // Later, the job is abandoned: B's start-up recovery settles it for the 3 delivered.
      clockB.advance(11 * 60_000);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(1);
      expect(billing.holds.get(ref)).toMatchObject({ state: 'settled', keptCents: 150 });
      expect(await billing.balanceCents(user.id)).toBe(1000 - 150);
      expect(billing.usedOf(user.id, 'leads')).toBe(3);
      expect(await b.services.connect.jobs.recoverAbandoned()).toBe(0);

      // A's job ending after all (its process was only stalled) settles nothing twice.
      stopA.abort();
      const result = await running;
      expect(result).toMatchObject({ written: 3, credits: 10 });
      expect(billing.holds.get(ref)).toMatchObject({ state: 'settled', keptCents: 150 });
      expect(billing.usedOf(user.id, 'leads')).toBe(3);
      expect(ref).toBe(
        reservationRef((await b.database.db.selectFrom('connect_jobs').select('id').executeTakeFirstOrThrow()).id),
      );
      const { records } = await recordsOf(client(b, user), 'contacts');
      expect(records).toEqual([0, 1, 2].map((i) => fakeRecord(i, '/get-leads')));
    } finally {
      await b.close();
      await a.close();
      await fake.close();
    }
  });
});
