// The broker's release order on PostgreSQL, against a scripted log: events wait
// below a missing id until it arrives, until every transaction that may own it
// has ended, or until gapRetentionMs; without snapshots (SQLite) a missing id
// is never waited for.
import { describe, expect, it } from 'vitest';
import { type EventSubscriber, EventBroker } from '../../../src/modules/events/broker.js';
import { EventRecorder } from '../../../src/modules/events/recorder.js';
import type { EventRow, EventStore, Snapshot, TailRead } from '../../../src/modules/events/store.js';
import { ManualClock } from '../../../src/lib/clock.js';

class ScriptedLog {
  readonly rows = new Map<number, EventRow>();
  snapshot: Snapshot | null = { xmin: 100, xmax: 100, inProgress: new Set(), running: new Set() };
  commit(...ids: number[]) {
    for (const id of ids)
      this.rows.set(id, { id, user_id: 'u', type: 'object_deleted', payload: `{"n":${id}}`, created_at: 0 });
  }
  running(...xids: number[]) {
    this.snapshot = { xmin: Math.min(...xids, 200), xmax: 200, inProgress: new Set(xids), running: new Set(xids) };
  }
  /** Transactions running with ids at or past the snapshot's xmax: in no list of the snapshot, only in pg_stat_activity. */
  runningPastXmax(...xids: number[]) {
    this.snapshot = { xmin: 200, xmax: 200, inProgress: new Set(), running: new Set(xids) };
  }
  ended() {
    this.snapshot = { xmin: 300, xmax: 300, inProgress: new Set(), running: new Set() };
  }
  private read(after: number, also: number[], limit: number): EventRow[] {
    return [...this.rows.values()]
      .filter((r) => r.id > after || also.includes(r.id))
      .sort((x, y) => x.id - y.id)
      .slice(0, limit);
  }
  store(): EventStore {
    return {
      latestId: async () => Math.max(0, ...this.rows.keys()),
      listAfter: async (after: number, also: number[], limit: number): Promise<TailRead<EventRow>> => ({
        rows: this.read(after, also, limit),
        snapshot: this.snapshot,
      }),
      listIdsAfter: async (after: number, also: number[], limit: number): Promise<TailRead<number>> => ({
        rows: this.read(after, also, limit).map((r) => r.id),
        snapshot: this.snapshot,
      }),
    } as unknown as EventStore;
  }
}

async function setUp(log: ScriptedLog, now: () => number = Date.now) {
  const broker = new EventBroker(log.store(), new EventRecorder(new ManualClock()), null, {
    pollIntervalMs: 600_000,
    gapRetentionMs: 10_000,
    now,
  });
  const delivered: number[] = [];
  const subscriber: EventSubscriber = {
    userId: 'u',
    selectionKey: 'all',
    accepts: () => true,
    deliver: (e) => delivered.push(e.id),
  };
  await broker.ready();
  broker.subscribe(subscriber);
  const read = async () => {
    broker.wake();
    const internal = broker as unknown as { running: Promise<void> | null };
    while (internal.running) await internal.running;
  };
  return { broker, delivered, read };
}

describe('EventBroker release order', () => {
  it('holds events above a missing id while a transaction that may own it runs, and releases the id first when it commits', async () => {
    const log = new ScriptedLog();
    const { broker, delivered, read } = await setUp(log);
    log.commit(1, 3, 4);
    log.running(150);
    await read();
    expect(delivered).toEqual([1]);
    expect(broker.releasedUpTo).toBe(1);
    log.commit(2);
    log.ended();
    await read();
    expect(delivered).toEqual([1, 2, 3, 4]);
    expect(broker.releasedUpTo).toBe(4);
  });

  it('gives a missing id up once every transaction running when it was found has ended, and releases what waited', async () => {
    const log = new ScriptedLog();
    const { delivered, read } = await setUp(log);
    log.commit(1, 3);
    log.running(150, 160);
    await read();
    expect(delivered).toEqual([1]);
    log.running(160, 170); // 150 ended without committing id 2; 160 still runs
    await read();
    expect(delivered).toEqual([1]);
    log.running(170);
    await read();
    expect(delivered).toEqual([1, 3]);
  });

  it('gives a missing id up after gapRetentionMs when its possible owners never end', async () => {
    const log = new ScriptedLog();
    let now = 0;
    const { delivered, read } = await setUp(log, () => now);
    log.commit(1, 3);
    log.running(150);
    await read();
    now = 9_000;
    await read();
    expect(delivered).toEqual([1]);
    now = 10_001;
    await read();
    expect(delivered).toEqual([1, 3]);
  });

  it('never waits without snapshots (SQLite commits ids in order)', async () => {
    const log = new ScriptedLog();
    log.snapshot = null;
    const { delivered, read } = await setUp(log);
    log.commit(1, 3);
    await read();
    expect(delivered).toEqual([1, 3]);
  });

  it('gives a missing id up at the next read when no transaction was running at the read that found it (the owner rolled back)', async () => {
    const log = new ScriptedLog();
    const { delivered, read } = await setUp(log);
    log.commit(1, 2, 5);
    log.ended();
    await read();
    expect(delivered).toEqual([1, 2]);
    await read();
    expect(delivered).toEqual([1, 2, 5]);
  });

  it("waits for an owner whose transaction id is past the snapshot's xmax (in no list of the snapshot)", async () => {
    // PostgreSQL's xmax is the latest finished transaction + 1: a transaction that took its id after that
    // and drew a lower event id is running but in neither xip nor below xmax. This lost events before.
    const log = new ScriptedLog();
    const { delivered, read } = await setUp(log);
    log.commit(1, 3);
    log.runningPastXmax(250);
    await read();
    expect(delivered).toEqual([1]);
    log.runningPastXmax(250, 260);
    await read();
    expect(delivered).toEqual([1]);
    log.commit(2);
    log.ended();
    await read();
    expect(delivered).toEqual([1, 2, 3]);
  });

  it('delivers an id whose owner committed just after the snapshot that found it missing, in order', async () => {
    const log = new ScriptedLog();
    const { delivered, read } = await setUp(log);
    log.commit(1, 3);
    log.ended(); // the owner of 2 is no longer running when pg_stat_activity is read: it committed
    await read();
    expect(delivered).toEqual([1]);
    log.commit(2);
    await read();
    expect(delivered).toEqual([1, 2, 3]);
  });

  it('reads again by itself while an id is missing: the owner may end without any commit to wake the loop', async () => {
    const log = new ScriptedLog();
    const { delivered, read, broker } = await setUp(log);
    log.commit(1, 3);
    log.running(150);
    await read();
    expect(delivered).toEqual([1]);
    log.ended(); // rolled back: no announce, no NOTIFY
    const deadline = Date.now() + 2000;
    while (delivered.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(delivered).toEqual([1, 3]);
    await broker.stop();
  });
});
