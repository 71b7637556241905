// Several instances on one PostgreSQL database: NOTIFY carries new ids to every
// instance, a dropped LISTEN connection comes back, and events committed out of
// id order are still delivered. SQLite is one process by design (in-process
// wake-ups only), so these run only when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import type { PgEventChannel } from '../../../src/modules/events/pg-channel.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { emit, eventually, sleep, stream } from './support.js';

const onPostgres = !!process.env.DATABASE_URL;
// A safety poll far longer than any test: delivery below is by NOTIFY (or announce) alone.
const noPoll = { ...loadConfig({ NODE_ENV: 'test' }).events, pollIntervalMs: 600_000 };

describe.skipIf(!onPostgres)('events across instances (PostgreSQL only: skipped without DATABASE_URL, SQLite has no second instance)', () => {
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
    const channel = (b.services.eventStreams.broker as unknown as { channel: PgEventChannel }).channel;
    const pid = channel.listenerPid;
    expect(pid).not.toBeNull();
    const killed = await a.database.pgPool!.query('select pg_terminate_backend($1) as ok', [pid]);
    expect(killed.rows[0].ok).toBe(true);
    await eventually(() => channel.listenerPid !== null && channel.listenerPid !== pid, 10_000, 'a new LISTEN connection');
    const [id] = await emit(a, user.id, [['object_deleted', { object_id: 'after-reconnect', deleted_at: 'x' }]]);
    const [event] = await sse.waitForEvents(1, 3000);
    expect(event.id).toBe(String(id));
    sse.close();
  });

  it("delivers an event whose transaction commits after a later id's (the sequence is not commit order)", async () => {
    const slowWriter = await createVerifiedUser(a);
    const other = await createVerifiedUser(a);
    const sse = await stream(b, slowWriter.token, 'object_deleted');
    let commit!: () => void;
    const gate = new Promise<void>((r) => (commit = r));
    const recorded = new Promise<void>((resolveRecorded) => {
      void a.database.db
        .transaction()
        .execute(async (trx) => {
          await a.services.eventRecorder.record(trx, [{ userId: slowWriter.id, type: 'object_deleted', payload: { object_id: 'late' } }]);
          resolveRecorded();
          await gate;
        })
        .then(() => a.services.eventRecorder.announce());
    });
    await recorded; // its id is taken, not committed
    const [laterId] = await emit(a, other.id, [['object_deleted', { object_id: 'early' }]]);
    await sleep(200); // both instances have read past the uncommitted id by now
    commit();
    const [event] = await sse.waitForEvents(1, 3000);
    expect(JSON.parse(event.data).object_id).toBe('late');
    expect(Number(event.id)).toBeLessThan(laterId);
    sse.close();
  });

  it("orders one user's events by commit: a second writer waits for the first", async () => {
    const user = await createVerifiedUser(a);
    let commit!: () => void;
    const gate = new Promise<void>((r) => (commit = r));
    let firstRecorded!: () => void;
    const recorded = new Promise<void>((r) => (firstRecorded = r));
    const first = a.database.db.transaction().execute(async (trx) => {
      await a.services.eventRecorder.record(trx, [{ userId: user.id, type: 'object_deleted', payload: { object_id: '1' } }]);
      firstRecorded();
      await gate;
    });
    await recorded;
    let secondDone = false;
    const second = b.services.eventRecorder.record(b.database.db, [{ userId: user.id, type: 'object_deleted', payload: { object_id: '2' } }]).then(() => {
      secondDone = true;
    });
    await sleep(200);
    expect(secondDone).toBe(false);
    commit();
    await Promise.all([first, second]);
    const rows = await a.database.db.selectFrom('events').select(['id', 'payload']).where('user_id', '=', user.id).orderBy('id').execute();
    expect(rows.map((r) => JSON.parse(r.payload).object_id)).toEqual(['1', '2']);
  });
});
