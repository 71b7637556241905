// A call whose media instance stopped ends failed (outcome instance_stopped)
// within a minute, once, whichever instances look at the same time; a call
// whose instance still confirms it is left alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { callConfig } from './support.js';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await createTestApp({ config: callConfig() });
  b = await createTestApp({ config: callConfig(), clock: a.clock, shareDatabaseWith: a });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

async function session(userId: string, instance: string, heartbeatAt: number): Promise<string> {
  const id = newId(a.clock.now());
  await a.database.db
    .insertInto('call_sessions')
    .values({
      id,
      user_id: userId,
      direction: 'outbound',
      status: 'in_progress',
      webhook_url: null,
      summary: JSON.stringify({ to: '+14155550123', from: '+14155550100' }),
      provider_call_id: 'CA1',
      duration_seconds: null,
      finished_at: null,
      record_object_id: null,
      created_at: a.clock.now(),
      updated_at: a.clock.now(),
      media_instance: instance,
      media_heartbeat_at: heartbeatAt,
    })
    .execute();
  return id;
}

describe('calls of a stopped instance', () => {
  it('end failed with outcome instance_stopped once, and live ones stay', async () => {
    const user = await createFundedUser(a);
    const now = a.clock.now();
    const gone = await session(user.id, 'instance_gone', now - 46_000);
    const live = await session(user.id, 'instance_live', now - 10_000);
    const [one, two] = await Promise.all([a.services.voice.failOrphaned(), b.services.voice.failOrphaned()]);
    expect(one + two).toBeGreaterThanOrEqual(1);
    const goneView = (
      await a.app.inject({ method: 'GET', url: `/api/calls/${gone}`, headers: bearer(user.token) })
    ).json();
    expect(goneView).toMatchObject({ status: 'failed', outcome: 'instance_stopped', reason: 'instance_stopped' });
    const liveView = (
      await a.app.inject({ method: 'GET', url: `/api/calls/${live}`, headers: bearer(user.token) })
    ).json();
    expect(liveView.status).toBe('in_progress');
    const events = await a.database.db
      .selectFrom('events')
      .select(['payload'])
      .where('user_id', '=', user.id)
      .where('type', '=', 'call_status')
      .execute();
    expect(
      events.filter((e) => JSON.parse(e.payload).session_id === gone && JSON.parse(e.payload).status === 'failed'),
    ).toHaveLength(1);
    expect(await a.services.voice.failOrphaned()).toBe(0);
  });

  it('a temporary call of a stopped instance gives its number back to the pool', async () => {
    const user = await createFundedUser(a);
    const now = a.clock.now();
    const gone = await session(user.id, 'instance_gone_2', now - 61_000);
    const number = '+14155550999';
    await a.database.db
      .insertInto('temporary_sessions')
      .values({
        session_id: gone,
        user_id: user.id,
        type: 'demo',
        phone: '+14155550123',
        email: 'grace@example.com',
        number,
        created_at: now,
        summary_sent_at: null,
      })
      .execute();
    // Leased for the call's longest duration: without the orphan check the number would stay busy for an hour.
    await a.database.db
      .insertInto('temporary_number_leases')
      .values({ number, user_id: user.id, session_id: gone, leased_at: now - 61_000, expires_at: now + 3_600_000 })
      .execute();
    await b.services.voice.failOrphaned();
    await expect
      .poll(
        async () =>
          (
            await a.database.db
              .selectFrom('temporary_number_leases')
              .select('number')
              .where('number', '=', number)
              .execute()
          ).length,
        { timeout: 5000 },
      )
      .toBe(0);
  });
});
