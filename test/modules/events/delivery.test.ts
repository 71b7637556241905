// Delivery at scale, over a real database and the real broker: catching up from
// the broker's recent events (not the log), the bound on all streams' queued
// bytes, coalesced and shared writes, and no reads while nobody is subscribed.
// Sinks are our own StreamSink interface, so backlogs are set exactly.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventBroker } from '../../../src/modules/events/broker.js';
import {
  type ConnectionOptions,
  type DeliveryContext,
  EventConnection,
} from '../../../src/modules/events/connection.js';
import { BufferBudget, JoinCache, Slots, WriteScheduler } from '../../../src/modules/events/delivery.js';
import { RecentEvents } from '../../../src/modules/events/recent.js';
import { EventStore } from '../../../src/modules/events/store.js';
import { Frames, StreamEvent } from '../../../src/modules/events/stream-event.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { emit, eventually, memorySink, sleep } from './support.js';

/** Waits `n` turns of the event loop (a scheduler pass yields two between its slices). */
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const MB = 1024 * 1024;
const options: ConnectionOptions = {
  keepAliveMs: 60_000,
  maxBufferedBytes: 4 * MB,
  slowClientTimeoutMs: 10_000,
  reauthIntervalMs: 60_000,
  retryMs: 2000,
  replayBatch: 200,
  catchUpWriteBytes: 64 * 1024,
  pressureBytes: 64 * 1024,
};

const brokers: EventBroker[] = [];
afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop();
});

/** A second delivery side on the test app's database (its own broker, recent events, scheduler and budget). */
async function instance(
  settings: { recentBytes?: number; coalesceMs?: number; totalLimit?: number; sliceMs?: number } = {},
) {
  const store = new EventStore(t.database.db, t.database.dialect);
  const recent = new RecentEvents(settings.recentBytes ?? 4 * MB);
  const scheduler = new WriteScheduler(settings.coalesceMs ?? 0, settings.sliceMs);
  const broker = new EventBroker(store, t.services.events.eventRecorder, null, {
    recent,
    scheduler,
    pollIntervalMs: 600_000,
  });
  brokers.push(broker);
  const context: DeliveryContext = {
    store,
    recent,
    scheduler,
    budget: new BufferBudget(settings.totalLimit ?? 64 * MB),
    logSlots: new Slots(2),
    joins: new JoinCache(Frames.join),
    releasedUpTo: () => broker.releasedUpTo,
    options,
  };
  const open = async (userId: string, startAfter = 0) => {
    await broker.ready();
    const out = memorySink();
    const connection = new EventConnection(userId, { types: null, filters: [] }, startAfter, context, async () => true);
    connection.bindSubscription(broker.subscribe(connection));
    await connection.attach(out.sink);
    return { connection, ...out };
  };
  return { store, recent, scheduler, broker, context, open };
}

const deletions = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) => ['object_deleted', { object_id: `${tag}${i}` }] as ['object_deleted', Record<string, unknown>],
  );

describe('catching up', () => {
  it('a stream that fell behind catches up from the recent events, not the log', async () => {
    const { open } = await instance();
    const user = await createVerifiedUser(t);
    const s = await open(user.id);
    const live = await emit(t, user.id, deletions(3, 'a'));
    await eventually(() => s.ids().length === 3, 5000, 'live events');
    s.setBacklog(5 * MB); // past the per-stream limit
    const missed = await emit(t, user.id, deletions(5, 'b'));
    await sleep(100);
    expect(s.ids()).toEqual(live); // nothing queued on top of the backlog
    // Proof that the catch-up does not read the log: the rows are gone from it.
    await t.database.db.deleteFrom('events').where('id', 'in', missed).execute();
    s.setBacklog(0);
    await eventually(() => s.ids().length === 8, 5000, 'the catch-up');
    const after = await emit(t, user.id, deletions(2, 'c'));
    await eventually(() => s.ids().length === 10, 5000, 'live again');
    expect(s.ids()).toEqual([...live, ...missed, ...after]);
    s.connection.close('client');
  });

  it('reads the log when the recent events do not reach back far enough', async () => {
    const { open, recent } = await instance({ recentBytes: 0 }); // keeps nothing
    const user = await createVerifiedUser(t);
    const s = await open(user.id);
    const live = await emit(t, user.id, deletions(2, 'a'));
    await eventually(() => s.ids().length === 2, 5000, 'live events');
    s.setBacklog(5 * MB);
    const missed = await emit(t, user.id, deletions(250, 'b')); // more than one log page
    await sleep(100);
    expect(recent.size).toBe(0);
    s.setBacklog(0);
    await eventually(() => s.ids().length === 252, 5000, 'the catch-up');
    const after = await emit(t, user.id, deletions(1, 'c'));
    await eventually(() => s.ids().length === 253, 5000, 'live again');
    expect(s.ids()).toEqual([...live, ...missed, ...after]);
    s.connection.close('client');
  });

  it('a new stream with Last-Event-ID replays from the log, then goes live without gaps or repeats', async () => {
    const { open } = await instance();
    const user = await createVerifiedUser(t);
    const before = await emit(t, user.id, deletions(30, 'a'));
    const s = await open(user.id, before[9]);
    const during = await emit(t, user.id, deletions(3, 'b'));
    await eventually(() => s.ids().length === 23, 5000, 'replay and live');
    expect(s.ids()).toEqual([...before.slice(10), ...during]);
    s.connection.close('client');
  });
});

describe('the bound on all streams together', () => {
  it('past the total, a stream with a backlog stops queueing (under its own limit) while others go on; it catches up once drained', async () => {
    const { open, context } = await instance({ totalLimit: 1 * MB });
    const user = await createVerifiedUser(t);
    const behind = await open(user.id);
    const fresh = await open(user.id);
    behind.setBacklog(2 * MB); // under the 4 MB per-stream limit, over the 1 MB total
    const first = await emit(t, user.id, deletions(1, 'a'));
    await eventually(() => fresh.ids().length === 1, 5000, 'the stream without a backlog');
    await sleep(100);
    expect(behind.ids()).toEqual([]);
    expect(context.budget.exceeded).toBe(true);
    behind.setBacklog(0);
    await eventually(() => behind.ids().length === 1, 5000, 'the catch-up');
    const second = await emit(t, user.id, deletions(1, 'b'));
    await eventually(() => behind.ids().length === 2 && fresh.ids().length === 2, 5000, 'both live');
    expect(behind.ids()).toEqual([...first, ...second]);
    expect(fresh.ids()).toEqual([...first, ...second]);
    behind.connection.close('client');
    fresh.connection.close('client');
    expect(context.budget.total).toBe(0);
  });

  it('the same backlog is fine while the total is under its limit', async () => {
    const { open } = await instance({ totalLimit: 64 * MB });
    const user = await createVerifiedUser(t);
    const s = await open(user.id);
    s.setBacklog(2 * MB);
    const ids = await emit(t, user.id, deletions(1, 'a'));
    await eventually(() => s.ids().length === 1, 5000, 'the event');
    expect(s.ids()).toEqual(ids);
    s.connection.close('client');
  });
});

describe('coalesced writes', () => {
  it('writes at once when quiet; gathers what arrives within the window into one write shared by streams at the same position', async () => {
    const { open } = await instance({ coalesceMs: 300 });
    const user = await createVerifiedUser(t);
    const a = await open(user.id);
    const b = await open(user.id);
    const first = await emit(t, user.id, deletions(1, 'a'));
    await eventually(() => a.ids().length === 1 && b.ids().length === 1, 5000, 'the first event');
    const started = Date.now();
    const next = [...(await emit(t, user.id, deletions(1, 'b'))), ...(await emit(t, user.id, deletions(2, 'c')))];
    await sleep(50);
    expect(a.ids()).toEqual(first); // within the window: gathered, not written yet
    await eventually(() => a.ids().length === 4 && b.ids().length === 4, 5000, 'the gathered events');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(a.ids()).toEqual([...first, ...next]);
    expect(a.eventWrites()).toHaveLength(2); // one write for the first, one for the three gathered
    expect(a.eventWrites()[1]).toBe(b.eventWrites()[1]); // the same Buffer for both streams
    a.connection.close('client');
    b.connection.close('client');
  });

  it("the one-event write of every stream is the event's own shared frame", async () => {
    const { open } = await instance();
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 5 }, () => open(user.id)));
    await emit(t, user.id, deletions(1, 'a'));
    await eventually(() => streams.every((s) => s.eventWrites().length === 1), 5000, 'the event');
    const written = streams.map((s) => s.eventWrites()[0]);
    expect(new Set(written).size).toBe(1);
    expect(written[0].chunked.toString()).toMatch(/^[0-9a-f]+\r\nid: \d+\nevent: object_deleted\ndata: .*\n\n\r\n$/);
    for (const s of streams) s.connection.close('client');
  });
});

describe('while nobody is subscribed', () => {
  it('reads nothing on announce; the first stream re-syncs and receives only what follows', async () => {
    const { store, broker, open } = await instance();
    const reads: string[] = [];
    for (const method of ['listAfter', 'listIdsAfter', 'latestId'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        reads.push(method);
        return original(...args);
      };
    }
    const user = await createVerifiedUser(t);
    const first = await open(user.id);
    first.connection.close('client');
    expect(broker.subscriberCount()).toBe(0);
    reads.length = 0;
    const unseen = await emit(t, user.id, deletions(20, 'a')); // 20 announces, nobody listening
    await sleep(100);
    expect(reads).toEqual([]);

    const s = await open(user.id, unseen[19]);
    expect(reads).toContain('latestId'); // the re-sync
    const after = await emit(t, user.id, deletions(2, 'b'));
    await eventually(() => s.ids().length === 2, 5000, 'events after the re-sync');
    await sleep(50);
    expect(s.ids()).toEqual(after);
    s.connection.close('client');
  });
});

describe("a feed's round of writes cut into time slices (issue 26)", () => {
  /** An event of `userId` that no stream has passed yet (the feed is driven directly, without the broker). */
  const eventOf = (userId: string, id: number, bytes = 10) =>
    new StreamEvent({
      id,
      user_id: userId,
      type: 'object_deleted',
      payload: JSON.stringify({ object_id: 'x'.repeat(bytes) }),
      created_at: 0,
    });

  it('an event that arrives while a round is cut short goes out with it to the streams the round has not reached', async () => {
    const { open, scheduler } = await instance({ sliceMs: 0 }); // every slice ends after its first 64 streams
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 200 }, () => open(user.id)));
    const feed = streams[0].connection.feed;
    expect(feed.memberCount).toBe(200);
    const [a, b] = [eventOf(user.id, 10_000_001), eventOf(user.id, 10_000_002)];
    feed.deliver(a);
    scheduler.flush(); // writes a to the first 64 streams, then yields
    // The streams the first slice reached, whatever order they joined the feed in (concurrent opens may join out of order).
    const reachedFirst = new Set(streams.filter((s) => s.ids().length > 0));
    expect(reachedFirst.size).toBe(64);
    feed.deliver(b); // arrives between two slices of the round
    await eventually(() => streams.every((s) => s.ids().length === 2), 5000, 'both events on every stream');
    for (const s of streams) expect(s.ids()).toEqual([a.id, b.id]); // in order, once each
    // Streams the round had reached get b in the next round; every other one gets a and b in its one write of this
    // round (before: a alone, then b a whole round later), the same Buffer for all of them.
    const early = streams.filter((s) => reachedFirst.has(s));
    const late = streams.filter((s) => !reachedFirst.has(s));
    for (const s of early) expect(s.eventWrites()).toHaveLength(2);
    for (const s of late) expect(s.eventWrites()).toHaveLength(1);
    expect(new Set(late.map((s) => s.eventWrites()[0])).size).toBe(1);
    for (const s of streams) s.connection.close('client');
  });

  it('the next round gives streams that already have part of it the rest, joined once for all of them', async () => {
    const { open, scheduler } = await instance({ sliceMs: 0 }); // every slice ends after its first 64 streams
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 200 }, () => open(user.id)));
    const feed = streams[0].connection.feed;
    const [a, b, c] = [eventOf(user.id, 10_000_001), eventOf(user.id, 10_000_002), eventOf(user.id, 10_000_003)];
    feed.deliver(a);
    scheduler.flush(); // a to the first 64 streams
    feed.deliver(b);
    await turns(2); // the next slice (the scheduler yields two turns): a and b to the next 64
    feed.deliver(c); // the rest get a, b and c; the next round has b and c
    await eventually(() => streams.every((s) => s.ids().length === 3), 5000, 'every event on every stream');
    const byWrites = new Map<string, Frames[][]>();
    for (const s of streams) {
      expect(s.ids()).toEqual([a.id, b.id, c.id]); // in order, once each
      const shape = s
        .eventWrites()
        .map((w) => [...w.toString().matchAll(/^id: (\d+)$/gm)].length)
        .join('+');
      byWrites.set(shape, [...(byWrites.get(shape) ?? []), s.eventWrites()]);
    }
    expect([...byWrites.keys()].sort()).toEqual(['1+2', '2+1', '3']);
    expect(byWrites.get('1+2')).toHaveLength(64);
    expect(byWrites.get('2+1')).toHaveLength(64);
    // Each write of a group is one Buffer shared by the group: the tail (c alone) too, joined once for the round.
    for (const group of byWrites.values())
      for (let i = 0; i < group[0].length; i++) expect(new Set(group.map((w) => w[i])).size).toBe(1);
    for (const s of streams) s.connection.close('client');
  });

  it('between two slices, what a request defers to the end of its turn (a commit) runs before the round goes on', async () => {
    const { open, scheduler } = await instance({ sliceMs: 0 }); // every slice ends after its first 64 streams
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 200 }, () => open(user.id)));
    const feed = streams[0].connection.feed;
    const reached = () => streams.filter((s) => s.ids().length > 0).length;
    feed.deliver(eventOf(user.id, 10_000_001));
    scheduler.flush(); // the first 64, then it yields
    expect(reached()).toBe(64);
    // A request read in the next turn defers its commit to the end of that turn (group commit's setImmediate), as this does.
    const atCommit = await new Promise<number>((resolve) => setImmediate(() => resolve(reached())));
    expect(atCommit).toBe(64);
    await eventually(() => reached() === 200, 5000, 'the round goes on');
    for (const s of streams) s.connection.close('client');
  });

  it('a round already large does not take more: what arrives waits for the next round, still in order and once', async () => {
    const { open, scheduler } = await instance({ sliceMs: 0 });
    const user = await createVerifiedUser(t);
    const streams = await Promise.all(Array.from({ length: 130 }, () => open(user.id)));
    const feed = streams[0].connection.feed;
    const [a, b] = [eventOf(user.id, 10_000_001, 200 * 1024), eventOf(user.id, 10_000_002, 100 * 1024)];
    feed.deliver(a);
    scheduler.flush();
    feed.deliver(b);
    await eventually(() => streams.every((s) => s.ids().length === 2), 5000, 'both events on every stream');
    for (const s of streams) expect(s.ids()).toEqual([a.id, b.id]);
    for (const s of streams) expect(s.eventWrites()).toHaveLength(2);
    for (const s of streams) s.connection.close('client');
  });
});
