// Live streams under many concurrent writers (on PostgreSQL, event ids commit
// out of order): every event reaches its user's stream, none twice. This found
// the broker giving up a missing id whose owner had taken its transaction id
// after the latest finished one (past the snapshot's xmax, so in no list of
// the snapshot) and then committed: the stream never got it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import { sleep, stream } from './support.js';

let t: TestApp;
const users: TestUser[] = [];
beforeAll(async () => {
  t = await createTestApp();
  for (let i = 0; i < 30; i++) users.push(await createVerifiedUser(t));
});
afterAll(() => t.close());

it('delivers every event of 30 concurrent writers, 20 rounds, to live streams exactly once', async () => {
  const streams = await Promise.all(users.map((u) => stream(t, u.token, 'call_status')));
  const expected = new Map<string, number>();
  for (let round = 0; round < 20; round++) {
    await Promise.all(
      users.map(async (u, i) => {
        const n = (round + i) % 5 === 0 ? 3 : 1;
        await t.database.db.transaction().execute(async (trx) => {
          // Work before and after the event, with pauses, so transactions overlap and commit out of id order.
          await trx.selectFrom('users').select('id').where('id', '=', u.id).execute();
          await sleep(Math.random() * 4);
          await t.services.events.eventRecorder.record(
            trx,
            Array.from({ length: n }, (_, k) => ({
              userId: u.id,
              type: 'call_status' as const,
              payload: { session_id: `${round}-${k}`, status: 'queued', at: new Date().toISOString() },
            })),
          );
          await sleep(Math.random() * 4);
        });
        t.services.events.eventRecorder.announce();
        expected.set(u.id, (expected.get(u.id) ?? 0) + n);
      }),
    );
  }
  await Promise.all(users.map((u, i) => streams[i]!.waitForEvents(expected.get(u.id)!, 10_000).catch(() => undefined)));
  await sleep(200);
  users.forEach((u, i) => {
    const ids = streams[i]!.events.map((e) => Number(e.id));
    expect(ids.length, `user ${i}`).toBe(expected.get(u.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });
  for (const s of streams) s.close();
}, 60_000);
