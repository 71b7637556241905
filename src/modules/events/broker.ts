// The fan-out side of the event log: ONE tail loop per instance reads new rows
// (in batches, one query per wake-up however many streams are open) and hands
// each event to the open streams of its user that want it. It wakes on
// announce() from this instance, on NOTIFY from other instances (PostgreSQL),
// and on a slow safety poll. Delivery is synchronous and never waits on a
// socket: a slow subscriber buffers (and is ended by its own limit), it never
// holds up the loop, writers or other subscribers. Every event read is kept in
// the recent events (for streams catching up) before it is delivered, and the
// write scheduler is flushed after each batch (coalesced writes).
//
// While nobody is subscribed on this instance the loop reads nothing (a write
// costs no query here); the first stream to open re-syncs the cursor the way
// start() does before it subscribes.
//
// Order (PostgreSQL). Ids come from a sequence when the event is inserted, so
// they may commit out of order: id 7 can be visible while the transaction that
// drew 6 is still running. Streams must send one user's events in id order
// (Last-Event-ID is a position), so the loop RELEASES events only in id order:
// an event waits while a lower id is missing and may still come. A missing id
// was drawn by a transaction that already had its transaction id (the
// recorder makes sure of that) and, because a higher id was visible, before the
// snapshot of that read: so its owner was then finished or among the snapshot's
// in-progress transactions. The id is given up once all of those have finished
// in a later read's snapshot (the owner rolled back), or after gapRetentionMs
// (an unrelated long transaction among them). Writers never wait for each
// other. SQLite commits ids in order, so a missing id there is never coming.
import type { WriteScheduler } from './delivery.js';
import type { EventChannel } from './pg-channel.js';
import type { RecentEvents } from './recent.js';
import type { EventRecorder } from './recorder.js';
import type { EventStore, Snapshot } from './store.js';
import { StreamEvent } from './stream-event.js';

/** One open stream as the broker sees it. */
export interface EventSubscriber {
  readonly userId: string;
  /** Subscribers with equal keys accept the same events: `accepts` is asked once per key and event. */
  readonly selectionKey: string;
  /** Whether this subscriber wants the event (its types and payload filters). */
  accepts(event: StreamEvent): boolean;
  /** Takes the event without blocking. Called only with events of `userId`, in increasing id order. */
  deliver(event: StreamEvent): void;
  /**
   * Where this subscriber's events go, shared with the other subscribers of its
   * user and selection: the broker hands each event to the feed once instead of
   * calling deliver() on each of them (5,000 streams of one user: one call per event, not 5,000).
   */
  readonly feed?: { deliver(event: StreamEvent): void };
}

type Feed = NonNullable<EventSubscriber['feed']>;

/** The subscribers of one user and selection: those with a shared feed (counted per feed) and the others. */
interface Group {
  readonly members: Set<EventSubscriber>;
  readonly feeds: Map<Feed, number>;
  readonly plain: Set<EventSubscriber>;
}

export interface BrokerOptions {
  /** Rows read per query. */
  batchSize: number;
  pollIntervalMs: number;
  /**
   * Longest wait for a missing id whose possible owners have not all finished
   * (PostgreSQL). Past it the id is given up, and if it commits later, streams
   * already past it do not get it live (a replay from the log does).
   */
  gapRetentionMs: number;
  /** Ids below the log's end inspected at start (and at a re-sync) for such gaps. */
  startLookback: number;
  /** Where every event read is kept for streams catching up. */
  recent: RecentEvents | null;
  /** Flushed after each batch read. */
  scheduler: WriteScheduler | null;
  now: () => number;
  onError: (err: unknown) => void;
}

const MAX_TRACKED_GAPS = 10_000;
const MAX_GAP_IDS_PER_QUERY = 500;
/** While ids are missing, the log is read again after this long, doubling up to the max: their owners end without telling us. */
const GAP_RECHECK_FIRST_MS = 10;
const GAP_RECHECK_MAX_MS = 1000;

/** A missing id: since when, and the transactions that may still commit it (null until the read that found it is settled). */
interface Gap {
  since: number;
  owners: Set<number> | null;
}

/** Whether every transaction of `owners` had finished when `snapshot` was taken. */
function allFinished(owners: Set<number>, snapshot: Snapshot): boolean {
  for (const xid of owners) {
    if (xid >= snapshot.xmin && (xid >= snapshot.xmax || snapshot.inProgress.has(xid))) return false;
  }
  return true;
}

export class EventBroker {
  /** Per user, subscribers grouped by selection. */
  private readonly byUser = new Map<string, Map<string, Group>>();
  private readonly countByUser = new Map<string, number>();
  private total = 0;
  /** Bumped on every subscribe: an ids-only read that overlapped a subscribe is not trusted. */
  private generation = 0;
  /** Highest id read so far. */
  private cursor = 0;
  /** Ids below the cursor not seen yet. */
  private readonly gaps = new Map<number, Gap>();
  /** Read but not released (a lower id is missing), in increasing id order; ids only when read while nobody was subscribed. */
  private held: Array<StreamEvent | number> = [];
  /** Every id up to here has been released or will never come. */
  private released = 0;
  private starting: Promise<void> | null = null;
  private started = false;
  private running: Promise<void> | null = null;
  /** Wake-ups were skipped while nobody was subscribed: the cursor may be far behind the log. */
  private behind = false;
  private resyncing: Promise<void> | null = null;
  private wakeAgain = false;
  private stopped = false;
  private pollTimer: NodeJS.Timeout | null = null;
  private recheckTimer: NodeJS.Timeout | null = null;
  private recheckDelayMs = GAP_RECHECK_FIRST_MS;
  private readonly options: BrokerOptions;
  private readonly unhookRecorder: () => void;

  constructor(
    private readonly store: EventStore,
    recorder: EventRecorder,
    private readonly channel: EventChannel | null,
    options: Partial<BrokerOptions> = {},
  ) {
    this.options = {
      batchSize: 200,
      pollIntervalMs: 2000,
      gapRetentionMs: 10_000,
      startLookback: 1000,
      recent: null,
      scheduler: null,
      now: Date.now,
      onError: () => {},
      ...options,
    };
    // Every instance must hear about a commit, whether or not this one has subscribers yet.
    this.unhookRecorder = recorder.onAnnounce(() => {
      this.channel?.notify();
      this.wake();
    });
  }

  /**
   * Starts the tail loop (idempotent; streams await it before subscribing). The
   * cursor starts at the log's current end: older events reach a stream through
   * its own replay. The ids just below the end are read once so that events
   * still uncommitted at this moment are waited for instead of skipped.
   */
  start(): Promise<void> {
    this.starting ??= (async () => {
      await this.sync();
      await this.channel?.listen({
        onHint: (id) => {
          if (id > this.cursor || this.gaps.size > 0) this.wake();
        },
        onConnected: () => this.wake(),
      });
      this.pollTimer = setInterval(() => this.wake(), this.options.pollIntervalMs);
      this.pollTimer.unref();
      this.started = true;
      this.wake(); // commits announced while starting
    })();
    // A failed start (database unreachable) is retried by the next stream instead of failing every one after it.
    this.starting.catch(() => {
      if (!this.started) this.starting = null;
    });
    return this.starting;
  }

  /**
   * Call before subscribe(): starts the loop, and when reads were skipped while
   * nobody was subscribed, moves the cursor to the log's end first (as start()
   * does), so the new stream's events are read with their payloads and not a
   * backlog nobody wants.
   */
  async ready(): Promise<void> {
    await this.start();
    if (this.total > 0 || !this.behind) return;
    this.resyncing ??= (async () => {
      while (this.running) await this.running;
      await this.sync();
    })().finally(() => {
      this.resyncing = null;
    });
    await this.resyncing;
  }

  /**
   * Moves the cursor to just below the log's end and reads the ids from there
   * (so events still uncommitted are waited for instead of skipped). Ids only:
   * nobody is subscribed. A subscribe meanwhile stops it where it is, and the
   * payload reads go on from there.
   */
  private async sync(): Promise<void> {
    const generation = this.generation;
    const latest = await this.store.latestId();
    if (generation !== this.generation) return;
    this.rewind();
    this.cursor = this.released = Math.max(this.cursor, latest - this.options.startLookback);
    while (await this.readIds()) {
      // more ids
    }
    this.options.recent?.reset(this.released);
    if (generation === this.generation) this.behind = false;
  }

  /** Forgets what was read above `released`, to read it again (with payloads): held events, missing ids. */
  private rewind(): void {
    this.cursor = this.released;
    this.held = [];
    this.gaps.clear();
  }

  /**
   * Every event up to this id has been released to the streams (or will never
   * come). A stream starts and replays the log only up to here; later events
   * reach it live, in order.
   */
  get releasedUpTo(): number {
    return this.released;
  }

  /** Adds a subscriber; it receives events read from now on (call ready() first). */
  subscribe(subscriber: EventSubscriber): () => void {
    const { userId, selectionKey, feed } = subscriber;
    let groups = this.byUser.get(userId);
    if (!groups) this.byUser.set(userId, (groups = new Map()));
    let group = groups.get(selectionKey);
    if (!group) groups.set(selectionKey, (group = { members: new Set(), feeds: new Map(), plain: new Set() }));
    group.members.add(subscriber);
    if (feed) group.feeds.set(feed, (group.feeds.get(feed) ?? 0) + 1);
    else group.plain.add(subscriber);
    this.countByUser.set(userId, (this.countByUser.get(userId) ?? 0) + 1);
    this.total += 1;
    this.generation += 1;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      group.members.delete(subscriber);
      if (feed) {
        const holders = (group.feeds.get(feed) ?? 1) - 1;
        if (holders > 0) group.feeds.set(feed, holders);
        else group.feeds.delete(feed);
      } else group.plain.delete(subscriber);
      this.total -= 1;
      const left = (this.countByUser.get(userId) ?? 1) - 1;
      if (left > 0) this.countByUser.set(userId, left);
      else this.countByUser.delete(userId);
      if (group.members.size === 0 && groups.get(selectionKey) === group) groups.delete(selectionKey);
      if (groups.size === 0 && this.byUser.get(userId) === groups) this.byUser.delete(userId);
    };
  }

  /** Open subscriptions of one user on this instance, or of everyone. */
  subscriberCount(userId?: string): number {
    return userId === undefined ? this.total : (this.countByUser.get(userId) ?? 0);
  }

  /** Asks the loop to read new rows; calls during a read coalesce into one more read. */
  wake(): void {
    if (!this.started || this.stopped) return;
    if (this.running) {
      this.wakeAgain = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Stops the loop, the poll and the LISTEN connection; waits for a read in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unhookRecorder();
    await this.starting?.catch(() => {});
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.recheckTimer) clearTimeout(this.recheckTimer);
    await this.running;
    this.options.scheduler?.stop();
    await this.channel?.close();
  }

  private async drain(): Promise<void> {
    do {
      this.wakeAgain = false;
      try {
        if (await this.readOnce()) this.wakeAgain = true;
      } catch (err) {
        this.options.onError(err);
        return; // the next announce, notification or poll retries
      }
    } while (this.wakeAgain && !this.stopped);
  }

  /** One batch; true when there may be more to read right away. */
  private async readOnce(): Promise<boolean> {
    if (this.total === 0) {
      // Nobody to deliver to: no query at all (the next stream's ready() re-syncs).
      this.behind = true;
      return false;
    }
    if (this.held.length && typeof this.held[0] === 'number') this.rewind(); // held while nobody listened: read them again with payloads
    const limit = this.options.batchSize;
    const { rows, snapshot } = await this.store.listAfter(this.cursor, this.gapIds(), limit);
    for (const row of rows) this.take(row.id, () => new StreamEvent(row));
    this.settle(snapshot);
    this.options.scheduler?.flush();
    return rows.length === limit;
  }

  /** Ids only, while nobody is subscribed (start, re-sync); false when done or someone subscribed meanwhile. */
  private async readIds(): Promise<boolean> {
    const limit = this.options.batchSize * 10;
    const generation = this.generation;
    const { rows: ids, snapshot } = await this.store.listIdsAfter(this.cursor, this.gapIds(), limit);
    if (generation !== this.generation) return false; // someone subscribed: the payload reads go on from `released`
    for (const id of ids) this.take(id, () => id);
    this.settle(snapshot);
    return ids.length === limit;
  }

  private gapIds(): number[] {
    return [...this.gaps.keys()].slice(0, MAX_GAP_IDS_PER_QUERY);
  }

  /** Notes one id read (rows come in increasing id order): new ids above the cursor, or a missing one that arrived. */
  private take(id: number, item: () => StreamEvent | number): void {
    if (id > this.cursor) {
      const firstMissing = Math.max(this.cursor + 1, id - MAX_TRACKED_GAPS);
      const since = this.options.now();
      for (let missing = firstMissing; missing < id; missing++) this.gaps.set(missing, { since, owners: null });
      this.cursor = id;
      this.held.push(item());
      return;
    }
    if (!this.gaps.delete(id)) return; // already read
    const entry = item();
    let at = this.held.length;
    while (at > 0 && heldId(this.held[at - 1]) > id) at -= 1;
    this.held.splice(at, 0, entry);
  }

  /**
   * After a read: gives up missing ids that cannot come any more, then releases
   * the held events below the lowest missing id that still may, in id order.
   */
  private settle(snapshot: Snapshot | null): void {
    if (this.gaps.size) {
      const now = this.options.now();
      const giveUpBefore = now - this.options.gapRetentionMs;
      for (const [id, gap] of this.gaps) {
        if (gap.owners === null) {
          // First seen missing in this read: its owner is finished or one of the transactions running at the
          // read (the snapshot's in-progress list and those running past its xmax). Never given up in the
          // read that found it: an owner that committed right after the snapshot shows its row in the next one.
          if (snapshot) gap.owners = new Set([...snapshot.inProgress, ...snapshot.running]);
          else this.gaps.delete(id); // SQLite commits ids in order: a missing id never comes
        } else if (!snapshot || allFinished(gap.owners, snapshot) || gap.since < giveUpBefore) this.gaps.delete(id);
      }
      if (this.gaps.size > MAX_TRACKED_GAPS) {
        for (const old of this.gaps.keys()) {
          this.gaps.delete(old);
          if (this.gaps.size <= MAX_TRACKED_GAPS) break;
        }
      }
    }
    let frontier = Number.POSITIVE_INFINITY;
    for (const id of this.gaps.keys()) if (id < frontier) frontier = id;
    let count = 0;
    const { recent } = this.options;
    for (const entry of this.held) {
      if (heldId(entry) >= frontier) break;
      count += 1;
      if (typeof entry === 'number') continue;
      recent?.add(entry); // before delivery: a stream catching up finds it there
      this.fanOut(entry);
    }
    if (count) this.held = count === this.held.length ? [] : this.held.slice(count);
    this.released = Number.isFinite(frontier) ? frontier - 1 : this.cursor;
    this.scheduleRecheck();
  }

  /**
   * A missing id is settled by a later read, but the transactions it waits for
   * may end without a commit of events (a rollback, an unrelated transaction),
   * so nothing would wake the loop: read again soon, backing off while they run.
   */
  private scheduleRecheck(): void {
    if (this.gaps.size === 0) {
      this.recheckDelayMs = GAP_RECHECK_FIRST_MS;
      return;
    }
    if (this.recheckTimer || this.stopped) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = null;
      this.wake();
    }, this.recheckDelayMs);
    this.recheckTimer.unref();
    this.recheckDelayMs = Math.min(GAP_RECHECK_MAX_MS, this.recheckDelayMs * 2);
  }

  /** Per user and selection: asks one subscriber whether the event is wanted, then hands it to each feed once and to each subscriber without one. */
  private fanOut(event: StreamEvent): void {
    const groups = this.byUser.get(event.userId);
    if (!groups) return;
    for (const group of groups.values()) {
      let accepted = false;
      for (const subscriber of group.members) {
        try {
          accepted = subscriber.userId === event.userId && subscriber.accepts(event);
        } catch (err) {
          this.options.onError(err);
        }
        break;
      }
      if (!accepted) continue;
      for (const feed of group.feeds.keys()) {
        try {
          feed.deliver(event);
        } catch (err) {
          this.options.onError(err);
        }
      }
      // A Set may lose members while it is iterated (a stream closing); they are then skipped.
      for (const subscriber of group.plain) {
        try {
          subscriber.deliver(event);
        } catch (err) {
          this.options.onError(err);
        }
      }
    }
  }
}

const heldId = (entry: StreamEvent | number): number => (typeof entry === 'number' ? entry : entry.id);
