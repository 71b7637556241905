// The fan-out side of the event log: ONE tail loop per instance reads new rows
// (in batches, one query per wake-up however many streams are open) and hands
// each event to the open streams of its user that want it. It wakes on
// announce() from this instance, on NOTIFY from other instances (PostgreSQL),
// and on a slow safety poll. Delivery is synchronous and never waits on a
// socket: a slow subscriber buffers (and is ended by its own limit), it never
// holds up the loop, writers or other subscribers.
import type { EventChannel } from './pg-channel.js';
import type { EventRecorder } from './recorder.js';
import type { EventStore } from './store.js';
import { StreamEvent } from './stream-event.js';

/** One open stream as the broker sees it. */
export interface EventSubscriber {
  readonly userId: string;
  /** Whether this subscriber wants the event (its types and payload filters). */
  accepts(event: StreamEvent): boolean;
  /** Takes the event without blocking. Called only with events of `userId`, in increasing id order. */
  deliver(event: StreamEvent): void;
}

export interface BrokerOptions {
  /** Rows read per query. */
  batchSize: number;
  pollIntervalMs: number;
  /** How long an id skipped by the sequence is waited for (PostgreSQL: a transaction still in flight, or rolled back). */
  gapRetentionMs: number;
  /** Ids below the log's end inspected at start for such gaps. */
  startLookback: number;
  now: () => number;
  onError: (err: unknown) => void;
}

const MAX_TRACKED_GAPS = 10_000;
const MAX_GAP_IDS_PER_QUERY = 500;

export class EventBroker {
  private readonly byUser = new Map<string, Set<EventSubscriber>>();
  private total = 0;
  /** Bumped on every subscribe: an ids-only read that overlapped a subscribe is not trusted. */
  private generation = 0;
  /** Highest id read so far. */
  private cursor = 0;
  /** Ids below the cursor not seen yet, with when they were first missed. */
  private readonly gaps = new Map<number, number>();
  private starting: Promise<void> | null = null;
  private ready = false;
  private running: Promise<void> | null = null;
  private wakeAgain = false;
  private stopped = false;
  private pollTimer: NodeJS.Timeout | null = null;
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
      gapRetentionMs: 60_000,
      startLookback: 1000,
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
      const latest = await this.store.latestId();
      this.cursor = Math.max(0, latest - this.options.startLookback);
      while (await this.readOnce()) {
        // nobody can be subscribed yet: these reads are ids only
      }
      await this.channel?.listen({
        onHint: (id) => {
          if (id > this.cursor || this.gaps.size > 0) this.wake();
        },
        onConnected: () => this.wake(),
      });
      this.pollTimer = setInterval(() => this.wake(), this.options.pollIntervalMs);
      this.pollTimer.unref();
      this.ready = true;
      this.wake(); // commits announced while starting
    })();
    // A failed start (database unreachable) is retried by the next stream instead of failing every one after it.
    this.starting.catch(() => {
      if (!this.ready) this.starting = null;
    });
    return this.starting;
  }

  /** Adds a subscriber; it receives events read from now on (call start() first). */
  subscribe(subscriber: EventSubscriber): () => void {
    let set = this.byUser.get(subscriber.userId);
    if (!set) this.byUser.set(subscriber.userId, (set = new Set()));
    set.add(subscriber);
    this.total += 1;
    this.generation += 1;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      set.delete(subscriber);
      this.total -= 1;
      if (set.size === 0 && this.byUser.get(subscriber.userId) === set) this.byUser.delete(subscriber.userId);
    };
  }

  /** Open subscriptions of one user on this instance, or of everyone. */
  subscriberCount(userId?: string): number {
    return userId === undefined ? this.total : (this.byUser.get(userId)?.size ?? 0);
  }

  /** Asks the loop to read new rows; calls during a read coalesce into one more read. */
  wake(): void {
    if (!this.ready || this.stopped) return;
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
    await this.running;
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
    this.expireGaps();
    const gapIds = [...this.gaps.keys()].slice(0, MAX_GAP_IDS_PER_QUERY);
    const limit = this.options.batchSize;
    if (this.total === 0) {
      // Nobody to deliver to: move the cursor (and track gaps) without reading payloads.
      const generation = this.generation;
      const ids = await this.store.listIdsAfter(this.cursor, gapIds, limit * 10);
      if (generation !== this.generation) return true; // someone subscribed meanwhile: read these again, with payloads
      for (const id of ids) this.advance(id);
      return ids.length === limit * 10;
    }
    const rows = await this.store.listAfter(this.cursor, gapIds, limit);
    for (const row of rows) {
      this.advance(row.id);
      this.fanOut(new StreamEvent(row));
    }
    return rows.length === limit;
  }

  private advance(id: number): void {
    if (id <= this.cursor) {
      this.gaps.delete(id);
      return;
    }
    const firstMissing = Math.max(this.cursor + 1, id - MAX_TRACKED_GAPS);
    const now = this.options.now();
    for (let missing = firstMissing; missing < id; missing++) this.gaps.set(missing, now);
    this.cursor = id;
    if (this.gaps.size > MAX_TRACKED_GAPS) {
      for (const old of this.gaps.keys()) {
        this.gaps.delete(old);
        if (this.gaps.size <= MAX_TRACKED_GAPS) break;
      }
    }
  }

  private expireGaps(): void {
    if (this.gaps.size === 0) return;
    const oldest = this.options.now() - this.options.gapRetentionMs;
    for (const [id, since] of this.gaps) if (since < oldest) this.gaps.delete(id);
  }

  private fanOut(event: StreamEvent): void {
    const subscribers = this.byUser.get(event.userId);
    if (!subscribers) return;
    for (const subscriber of [...subscribers]) {
      try {
        if (subscriber.userId === event.userId && subscriber.accepts(event)) subscriber.deliver(event);
      } catch (err) {
        this.options.onError(err);
      }
    }
  }
}
