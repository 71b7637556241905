// On PostgreSQL a user's events must commit in id order (a stream that sent id
// 8 would never send a 7 committed after it). The recorder takes a per-user
// lock BEFORE drawing the id; this checks that a second writer of the same
// user waits for the lock without having drawn an id yet.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { EventRecorder } from '../../../src/modules/events/recorder.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';

describe.runIf(Boolean(process.env.DATABASE_URL))('EventRecorder ordering on PostgreSQL', () => {
  let t: TestApp;
  let second: DatabaseHandle;
  beforeAll(async () => {
    t = await createTestApp();
    second = openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: t.dir, pgSchema: t.pgSchema, pgPoolSize: 2 });
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
  });

  const lastDrawnId = async () => Number((await sql<{ last_value: string }>`select last_value from events_id_seq`.execute(t.database.db)).rows[0].last_value);

  it('a second writer of the same user draws its id only after the first commits', async () => {
    const user = await createVerifiedUser(t);
    const recorder = new EventRecorder(t.clock, 'postgres');
    const event = { userId: user.id, type: 'object_deleted' as const, payload: { object_id: 'x', deleted_at: 'y' } };
    let releaseFirst!: () => void;
    const firstHolding = new Promise<void>((resolve) => {
      void t.database.db.transaction().execute(async (trx) => {
        await recorder.record(trx, [event]);
        resolve();
        await new Promise<void>((release) => (releaseFirst = release));
      });
    });
    await firstHolding;
    const firstId = await lastDrawnId();
    let secondDone = false;
    const secondWrite = second.db
      .transaction()
      .execute((trx) => recorder.record(trx, [event]))
      .then(() => (secondDone = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(secondDone).toBe(false); // waiting on the user's lock…
    expect(await lastDrawnId()).toBe(firstId); // …without an id drawn
    releaseFirst();
    await secondWrite;
    const ids = await t.database.db.selectFrom('events').select('id').where('user_id', '=', user.id).orderBy('id').execute();
    expect(ids.map((r) => Number(r.id)).slice(-2)).toEqual([firstId, firstId + 1]);
  });
});
