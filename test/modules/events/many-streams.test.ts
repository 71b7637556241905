// One user, many streams (issue 26), over a real database and the real broker
// of the test app: the per-event work is done once per user and selection, not
// once per stream (no per-stream delivery call, one frame and one joined Buffer
// shared by every stream, no per-stream log read), and still every stream gets
// every event of its own user and selection, in order, while a slow one neither
// holds up the others nor keeps events queued for itself.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EventConnection } from '../../../src/modules/events/connection.js';
import { type EventSelection, parseFilters, parseTypes } from '../../../src/modules/events/selection.js';
import { EventStore } from '../../../src/modules/events/store.js';
import { Frames } from '../../../src/modules/events/stream-event.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { emit, eventually, memorySink, sleep } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const ALL: EventSelection = { types: null, filters: [] };

/** A stream on the test app's own delivery side (broker, feeds, scheduler), on a memory sink. */
async function open(userId: string, selection: EventSelection = ALL) {
  const { broker, delivery } = t.services.events.eventStreams;
  await broker.ready();
  const out = memorySink();
  const connection = new EventConnection(userId, selection, broker.releasedUpTo, delivery, async () => true);
  connection.bindSubscription(broker.subscribe(connection));
  await connection.attach(out.sink);
  return { connection, ...out };
}

const deletions = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) => ['object_deleted', { object_id: `${tag}${i}` }] as ['object_deleted', Record<string, unknown>],
  );

describe('one user, many streams', () => {
  it('an event is handed over, framed and joined once for all the streams of a selection, and read from the log once', async () => {
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 40 }, () => open(user.id)));
    const perStream = vi.spyOn(EventConnection.prototype, 'deliver');
    const framed = vi.spyOn(Frames, 'text');
    const joined = vi.spyOn(Frames, 'join');
    const tailReads = vi.spyOn(EventStore.prototype, 'listAfter');
    const logReplays = vi.spyOn(EventStore.prototype, 'listForUser');
    const ids: number[] = [];
    for (let round = 0; round < 5; round++) {
      ids.push(...(await emit(t, user.id, deletions(3, `r${round}-`))));
      await sleep(15);
    }
    await eventually(() => streams.every((s) => s.ids().length === ids.length), 5000, 'every event on every stream');
    for (const s of streams) expect(s.ids()).toEqual(ids);
    expect(perStream).not.toHaveBeenCalled(); // the broker hands each event to the feed, not to each of the 40
    expect(framed.mock.calls.length).toBeLessThanOrEqual(ids.length); // each frame encoded once
    expect(joined.mock.calls.length).toBeLessThanOrEqual(ids.length); // at most one join per flush of the feed
    expect(tailReads.mock.calls.length).toBeLessThanOrEqual(ids.length); // one tail read per batch, not per stream
    expect(logReplays).not.toHaveBeenCalled();
    // Every stream wrote the same Buffers, one per flush.
    const first = streams[0].eventWrites();
    for (const s of streams) {
      expect(s.eventWrites()).toHaveLength(first.length);
      s.eventWrites().forEach((w, i) => expect(w).toBe(first[i]));
    }
    for (const s of streams) s.connection.close('client');
  });

  it('streams of other users and other selections get only their own events, in order', async () => {
    const alice = await createVerifiedUser(t);
    const bob = await createVerifiedUser(t);
    const aliceAll = await Promise.all(Array.from({ length: 5 }, () => open(alice.id)));
    const aliceOne = await Promise.all(
      Array.from({ length: 5 }, () =>
        open(alice.id, { types: parseTypes('object_deleted'), filters: parseFilters({ object_id: 'keep' }) }),
      ),
    );
    const bobAll = await Promise.all(Array.from({ length: 5 }, () => open(bob.id)));
    const a1 = await emit(t, alice.id, [
      ['object_deleted', { object_id: 'keep' }],
      ['object_deleted', { object_id: 'drop' }],
    ]);
    const b1 = await emit(t, bob.id, deletions(2, 'b'));
    const a2 = await emit(t, alice.id, [['object_deleted', { object_id: 'keep' }]]);
    await eventually(
      () =>
        aliceAll.every((s) => s.ids().length === 3) &&
        bobAll.every((s) => s.ids().length === 2) &&
        aliceOne.every((s) => s.ids().length === 2),
      5000,
      'the events',
    );
    await sleep(50);
    for (const s of aliceAll) expect(s.ids()).toEqual([...a1, ...a2]);
    for (const s of aliceOne) expect(s.ids()).toEqual([a1[0], a2[0]]);
    for (const s of bobAll) expect(s.ids()).toEqual(b1);
    for (const s of [...aliceAll, ...aliceOne, ...bobAll]) s.connection.close('client');
  });

  it('a stream whose client is behind leaves the feed: the others go on, nothing is queued for it, it catches up in order; closed streams leave no feed behind', async () => {
    const { scheduler } = t.services.events.eventStreams.delivery;
    const feedsBefore = scheduler.feedCount;
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 10 }, () => open(user.id)));
    expect(scheduler.feedCount).toBe(feedsBefore + 1); // ten streams, one feed
    const slow = streams[3];
    const first = await emit(t, user.id, deletions(2, 'a'));
    await eventually(() => streams.every((s) => s.ids().length === 2), 5000, 'the first events');
    slow.setBacklog(5 * 1024 * 1024); // past the per-stream limit
    const second = await emit(t, user.id, deletions(3, 'b'));
    const others = streams.filter((s) => s !== slow);
    await eventually(() => others.every((s) => s.ids().length === 5), 5000, 'the others');
    await sleep(100);
    expect(slow.ids()).toEqual(first);
    expect(slow.connection.feed.memberCount).toBe(9); // the slow one is not a member: the feed queues nothing for it
    const third = await emit(t, user.id, deletions(2, 'c'));
    await eventually(() => others.every((s) => s.ids().length === 7), 5000, 'the others again');
    slow.setBacklog(0);
    await eventually(() => slow.ids().length === 7, 5000, 'the catch-up');
    const fourth = await emit(t, user.id, deletions(1, 'd'));
    await eventually(() => streams.every((s) => s.ids().length === 8), 5000, 'all live');
    for (const s of streams) expect(s.ids()).toEqual([...first, ...second, ...third, ...fourth]);
    for (const s of streams) s.connection.close('client');
    expect(scheduler.feedCount).toBe(feedsBefore);
  });
});
