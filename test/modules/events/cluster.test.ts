// Several instances on one PostgreSQL database: NOTIFY carries new ids to every
// instance, a dropped LISTEN connection comes back, and events committed out of
// id order are still delivered. SQLite is one process by design (in-process
// wake-ups only), so these run only when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { PgEventChannel } from '../../../src/modules/events/pg-channel.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { emit, eventually, sleep, stream } from './support.js';

const onPostgres = !!process.env.DATABASE_URL;
// A safety poll far longer than any test: delivery below is by NOTIFY (or announce) alone.
const noPoll = { ...loadConfig({ NODE_ENV: 'test' }).events, pollIntervalMs: 600_000 };

class RollBack extends Error {}

/**
 * Records one object_deleted event through `app` in a transaction that stays
 * open (its id drawn, not committed) until commit() or rollBack(); either one
 * announces afterwards, as the data-plane services do.
 */
async function heldWrite(app: TestApp, userId: string, objectId: string) {
  let decide!: (commit: boolean) => void;
  const decided = new Promise<boolean>((r) => (decide = r));
  let drawn!: () => void;
  const recorded = new Promise<void>((r) => (drawn = r));
  const done = app.database.db
    .transaction()
    .execute(async (trx) => {
      await app.services.events.eventRecorder.record(trx, [
        { userId, type: 'object_deleted', payload: { object_id: objectId } },
      ]);
      drawn();
      if (!(await decided)) throw new RollBack();
    })
    .then(
      () => app.services.events.eventRecorder.announce(),
      (err) => {
        app.services.events.eventRecorder.announce();
        if (!(err instanceof RollBack)) throw err;
      },
    );
  await recorded;
  return {
    commit: () => (decide(true), done),
    rollBack: () => (decide(false), done),
  };
}

describe.skipIf(!onPostgres)(
  'events across instances (PostgreSQL only: skipped without DATABASE_URL, SQLite has no second instance)',
  () => {
    let a: TestApp;
    let b: TestApp;
    beforeAll(async () => {
      a = await createTestApp({ config: { events: noPoll } });
      b = await createTestApp({ shareDatabaseWith: a, config: { events: noPoll } });
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('an event recorded through instance A reaches a subscriber on instance B', async () => {
      const user = await createVerifiedUser(a);
      const sse = await stream(b, user.token, 'object_deleted');
      const started = Date.now();
      const [id] = await emit(a, user.id, [['object_deleted', { object_id: 'from-a', deleted_at: 'x' }]]);
      const [event] = await sse.waitForEvents(1, 3000);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(event).toMatchObject({ id: String(id), event: 'object_deleted' });
      expect(JSON.parse(event.data).object_id).toBe('from-a');
      sse.close();
    });

    it('re-establishes a dropped LISTEN connection', async () => {
      const user = await createVerifiedUser(a);
      const sse = await stream(b, user.token, 'object_deleted');
      const channel = (b.services.events.eventStreams.broker as unknown as { channel: PgEventChannel }).channel;
      const pid = channel.listenerPid;
      expect(pid).not.toBeNull();
      const killed = await a.database.pgPool!.query('select pg_terminate_backend($1) as ok', [pid]);
      expect(killed.rows[0].ok).toBe(true);
      await eventually(
        () => channel.listenerPid !== null && channel.listenerPid !== pid,
        10_000,
        'a new LISTEN connection',
      );
      const [id] = await emit(a, user.id, [['object_deleted', { object_id: 'after-reconnect', deleted_at: 'x' }]]);
      const [event] = await sse.waitForEvents(1, 3000);
      expect(event.id).toBe(String(id));
      sse.close();
    });

    it("delivers an event whose transaction commits after a later id's (the sequence is not commit order)", async () => {
      const slowWriter = await createVerifiedUser(a);
      const other = await createVerifiedUser(a);
      const sse = await stream(b, slowWriter.token, 'object_deleted');
      const late = await heldWrite(a, slowWriter.id, 'late'); // its id is taken, not committed
      const [laterId] = await emit(a, other.id, [['object_deleted', { object_id: 'early' }]]);
      await sleep(200); // both instances have read past the uncommitted id by now
      await late.commit();
      const [event] = await sse.waitForEvents(1, 3000);
      expect(JSON.parse(event.data).object_id).toBe('late');
      expect(Number(event.id)).toBeLessThan(laterId);
      sse.close();
    });

    it("one user's writers do not wait for each other, and a lower id committed last still reaches every stream first", async () => {
      const user = await createVerifiedUser(a);
      const before = await stream(b, user.token, 'object_deleted');
      const [previous] = await emit(a, user.id, [['object_deleted', { object_id: '0' }]]);
      await before.waitForEvents(1, 3000);
      const first = await heldWrite(a, user.id, '1'); // id drawn, not committed
      // The second writer of the same user commits while the first is open: no lock between them.
      await b.services.events.eventRecorder.record(b.database.db, [
        { userId: user.id, type: 'object_deleted', payload: { object_id: '2' } },
      ]);
      b.services.events.eventRecorder.announce();
      // Opened while the lower id is in flight: from the present (no Last-Event-ID), and by replay from the last id seen.
      const fresh = await stream(a, user.token, 'object_deleted');
      const resumed = await stream(b, user.token, 'object_deleted', { headers: { 'last-event-id': String(previous) } });
      await sleep(300);
      expect(before.events.length).toBe(1); // '2' waits for '1'
      expect(fresh.events).toEqual([]);
      expect(resumed.events).toEqual([]);
      await first.commit();
      for (const [sse, offset] of [
        [before, 1],
        [fresh, 0],
        [resumed, 0],
      ] as const) {
        const events = (await sse.waitForEvents(offset + 2, 3000)).slice(offset);
        expect(events.map((e) => JSON.parse(e.data).object_id)).toEqual(['1', '2']);
        expect(Number(events[0].id)).toBeLessThan(Number(events[1].id));
        sse.close();
      }
    });

    it('an id whose transaction rolled back holds nothing up once that transaction has ended', async () => {
      const user = await createVerifiedUser(a);
      const sse = await stream(b, user.token, 'object_deleted');
      const doomed = await heldWrite(a, user.id, 'never');
      await emit(a, user.id, [['object_deleted', { object_id: 'kept' }]]);
      await sleep(300);
      expect(sse.events).toEqual([]); // the lower id may still commit
      const rolledBackAt = Date.now();
      await doomed.rollBack();
      const [event] = await sse.waitForEvents(1, 3000);
      expect(JSON.parse(event.data).object_id).toBe('kept');
      expect(Date.now() - rolledBackAt).toBeLessThan(2000); // not the 10 s given to a transaction that may still commit
      sse.close();
    });

    it('wakes the instances of its own schema only: a deployment (or a test) in another schema of the database is not woken', async () => {
      const other = await createTestApp({ config: { events: noPoll } }); // its own schema, its own events table
      const hints = { a: 0, b: 0, other: 0 };
      const listeners = [
        [new PgEventChannel(a.database.pgPool!), 'a'],
        [new PgEventChannel(b.database.pgPool!), 'b'],
        [new PgEventChannel(other.database.pgPool!), 'other'],
      ] as const;
      const notifier = new PgEventChannel(a.database.pgPool!);
      try {
        for (const [listener, name] of listeners)
          await listener.listen({ onHint: () => (hints[name] += 1), onConnected: () => {} });
        notifier.notify();
        await eventually(() => hints.a > 0 && hints.b > 0, 3000, 'the hint on both instances of the schema');
        await sleep(300);
        expect(hints.other).toBe(0);
      } finally {
        await notifier.close();
        for (const [listener] of listeners) await listener.close();
        await other.close();
      }
    });

    it('spaces NOTIFYs under a burst: the first at once, then one per interval carrying the newest id', async () => {
      const channel = new PgEventChannel(a.database.pgPool!, { channel: 'spacing_test', minNotifyIntervalMs: 200 });
      const received: Array<{ id: number; at: number }> = [];
      const listener = new PgEventChannel(a.database.pgPool!, { channel: 'spacing_test' });
      await listener.listen({ onHint: (id) => received.push({ id, at: Date.now() }), onConnected: () => {} });
      try {
        const user = await createVerifiedUser(a);
        const started = Date.now();
        channel.notify();
        let newest = 0;
        for (let i = 0; i < 20; i++) {
          [newest] = await emit(a, user.id, [['object_deleted', { object_id: String(i) }]]);
          channel.notify();
        }
        await eventually(() => received.some((r) => r.id === newest), 3000, 'the newest id');
        await sleep(300);
        expect(received[0].at - started).toBeLessThan(150);
        expect(received.length).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - started) / 200));
        expect(received.length).toBeLessThan(10);
        expect(received.at(-1)!.id).toBe(newest);
      } finally {
        await channel.close();
        await listener.close();
      }
    });
  },
);
