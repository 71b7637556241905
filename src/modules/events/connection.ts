// One open event stream. It subscribes BEFORE it replays, and drops every id it
// has already passed (a user's events reach it in increasing id order), so
// nothing is missed or sent twice across the replay/live boundary.
//
// Live: the stream is a member of its user's and selection's live feed (one
// per instance, shared by every stream with that selection): the broker hands
// each event to the feed once, and the write scheduler flushes the feed (at
// once when it has been quiet, else after a short window), every member writing
// the same joined frames in one write.
//
// Catching up (at open, and whenever the stream fell behind): live events are
// not kept; the stream reads what it has not sent from the broker's recent
// events, or from the log when those do not reach back far enough, paced by
// the socket, and goes live again in the same synchronous step that finds
// nothing more to send. Every event the broker reads is added to the recent
// events before it is delivered, so the step from catching up to live loses
// nothing.
//
// Memory stays bounded however slow the client: frames are queued only while
// the socket's backlog is under maxBufferedBytes and, when the instance's total
// is over its limit, only by streams with no backlog. A stream that stopped
// queueing catches up once the client has read its backlog; a client that does
// not drain within slowClientTimeoutMs is ended and resumes with Last-Event-ID.
import type { EventSubscriber } from './broker.js';
import type { BufferBudget, FeedMember, JoinCache, LiveFeed, RoundFrames, Slots, WriteScheduler } from './delivery.js';
import type { RecentEvents } from './recent.js';
import { type EventSelection, matchesPayload, matchesType, selectionKey } from './selection.js';
import type { EventStore } from './store.js';
import { Frames, StreamEvent } from './stream-event.js';

/** Where frames go: the HTTP response, seen without Fastify or node:http. */
export interface StreamSink {
  /** Queues bytes; false when the transport would like us to wait for drain. */
  write(data: Frames | string): boolean;
  /** Bytes queued and not yet handed to the network. */
  readonly bufferedBytes: number;
  readonly closed: boolean;
  /** Resolves true on drain; false on close or after timeoutMs. */
  waitForDrain(timeoutMs: number): Promise<boolean>;
  /** graceful: flush and end; otherwise drop the connection and what it still holds. */
  end(graceful: boolean): void;
  onClose(listener: () => void): void;
  /** Called when everything queued has been handed to the network. */
  onDrain?(listener: () => void): void;
}

export interface ConnectionOptions {
  keepAliveMs: number;
  maxBufferedBytes: number;
  slowClientTimeoutMs: number;
  reauthIntervalMs: number;
  /** The `retry:` hint sent first: how long a client waits before reconnecting. */
  retryMs: number;
  /** Rows per log read when catching up. */
  replayBatch: number;
  /** Bytes written from the recent events before the stream waits for the socket. */
  catchUpWriteBytes: number;
  /** While the instance's total is over its limit, a stream's own limit shrinks to this. */
  pressureBytes: number;
}

/** What every stream of an instance shares (see delivery.ts, recent.ts). */
export interface DeliveryContext {
  store: EventStore;
  recent: RecentEvents;
  scheduler: WriteScheduler;
  budget: BufferBudget;
  /** Concurrent log reads for catching up (each holds a page of rows until the socket took it). */
  logSlots: Slots;
  /** Shared concatenations of recent events for streams catching up. */
  joins: JoinCache;
  /** The broker's releasedUpTo: the log is replayed only up to it, later events come live and in order. */
  releasedUpTo: () => number;
  options: ConnectionOptions;
}

export type CloseReason = 'client' | 'slow' | 'shutdown' | 'unauthorized' | 'error';

export class EventConnection implements EventSubscriber, FeedMember {
  private state: 'opened' | 'catching-up' | 'live' | 'closed' = 'opened';
  /** Everything of this user up to this id is handled (sent, or filtered out). */
  private lastId: number;
  /** This stream's user and selection on this instance: the broker delivers to it, once for all its streams. */
  readonly feed: LiveFeed;
  private readonly releaseFeed: () => void;
  lastWriteAt = -Infinity;
  /** The recent events' epoch in which this stream knows they hold everything it has not sent; -1: not known. */
  private syncedEpoch = -1;
  /** This stream's share of the budget's total. */
  private accounted = 0;
  private sink: StreamSink | null = null;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => {};
  private readonly closeListeners: Array<(reason: CloseReason) => void> = [];
  private readonly options: ConnectionOptions;
  readonly selectionKey: string;
  /** This stream's user and selection, for the shared concatenations (JoinCache). */
  private readonly joinGroup: string;

  constructor(
    readonly userId: string,
    private readonly selection: EventSelection,
    /** Send events after this id. */
    startAfter: number,
    private readonly context: DeliveryContext,
    /** Re-checks the caller's credential; false ends the stream. */
    private readonly stillAuthorized: () => Promise<boolean>,
  ) {
    this.lastId = startAfter;
    this.options = context.options;
    this.selectionKey = selectionKey(selection);
    this.joinGroup = `${userId}\u0000${this.selectionKey}`;
    const joins = context.joins;
    const group = this.joinGroup;
    ({ feed: this.feed, release: this.releaseFeed } = context.scheduler.holdFeed(userId, group, (events) =>
      joins.get(events, group),
    ));
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** Called once, by the service, with the broker's unsubscribe. */
  bindSubscription(unsubscribe: () => void): void {
    this.unsubscribe = unsubscribe;
  }

  onClose(listener: (reason: CloseReason) => void): void {
    this.closeListeners.push(listener);
  }

  accepts(event: StreamEvent): boolean {
    return matchesType(this.selection, event.type) && matchesPayload(this.selection, event);
  }

  /**
   * The broker hands events to `feed`, once for all its streams; this is the
   * same for a caller that does not know feeds (the feed drops what it has).
   * Streams not live are not in the feed: the catch-up reads the recent events (or the log).
   */
  deliver(event: StreamEvent): void {
    if (this.state === 'live') this.feed.deliver(event);
  }

  /** Starts writing to the client: preamble, replay after the start id, then live events. */
  async attach(sink: StreamSink): Promise<void> {
    if (this.state !== 'opened') return;
    this.sink = sink;
    sink.onClose(() => this.close('client'));
    if (sink.closed) return this.close('client');
    sink.onDrain?.(() => {
      if (this.state !== 'closed') this.account(sink.bufferedBytes);
    });
    sink.write(`retry: ${this.options.retryMs}\n: connected\n\n`);
    this.timers.push(setInterval(() => this.keepAlive(), this.options.keepAliveMs));
    this.timers.push(setInterval(() => void this.reauthorize(), this.options.reauthIntervalMs));
    for (const timer of this.timers) timer.unref();
    await this.catchUp();
  }

  close(reason: CloseReason): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.unsubscribe();
    this.feed.leave(this);
    this.releaseFeed();
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.account(0);
    // A slow client's queued bytes go with its socket; it resumes with Last-Event-ID.
    this.sink?.end(reason !== 'slow' && reason !== 'error');
    for (const listener of this.closeListeners) listener(reason);
  }

  /**
   * Called by the feed's flush: one write for the events of the round this
   * stream has not sent, unless its client is behind. Streams at the same
   * position (nearly always all of them) write the feed's one joined Buffer.
   */
  flushFeed(round: RoundFrames, now: number): void {
    if (this.state !== 'live') return;
    const events = round.events;
    let from = 0;
    while (from < events.length && events[from].id <= this.lastId) from += 1; // sent by the catch-up that made it live
    if (from === events.length) return;
    if (this.overLimit()) {
      // Behind: these and later events come from the recent events (or the log) once the client has read.
      void this.catchUp();
      return;
    }
    const own = round.from(from);
    this.lastId = events[events.length - 1].id;
    this.lastWriteAt = now;
    this.sink!.write(own);
    this.account(this.sink!.bufferedBytes);
  }

  /** Refreshes the socket's backlog in the budget; true when this stream must not queue more now. */
  private overLimit(): boolean {
    const buffered = this.sink!.bufferedBytes;
    this.account(buffered);
    const limit = this.context.budget.exceeded
      ? Math.min(this.options.maxBufferedBytes, this.options.pressureBytes)
      : this.options.maxBufferedBytes;
    return buffered > limit;
  }

  private account(bytes: number): void {
    this.context.budget.total += bytes - this.accounted;
    this.accounted = bytes;
  }

  /** Waits out the backlog, sends what was missed (recent events, else the log), then goes live. */
  private async catchUp(): Promise<void> {
    if (this.state === 'closed' || this.state === 'catching-up') return;
    this.state = 'catching-up';
    this.feed.leave(this);
    const { recent } = this.context;
    try {
      for (;;) {
        if (this.overLimit()) {
          if (!(await this.drained())) return;
          continue;
        }
        if (this.syncedEpoch !== recent.epoch && this.lastId >= recent.floorFor(this.userId))
          this.syncedEpoch = recent.epoch;
        if (this.syncedEpoch !== recent.epoch || this.lastId < recent.evictedFloorFor(this.userId)) {
          // The recent events do not reach back to lastId: read the log up to its end first.
          if (!(await this.replayLog())) return;
          continue;
        }
        // From the recent events, synchronously up to a byte budget; live in the same step when nothing is left.
        const events = recent.after(this.userId, this.lastId, this.options.catchUpWriteBytes);
        const wanted: StreamEvent[] = [];
        for (const event of events) {
          this.lastId = event.id;
          if (this.accepts(event)) wanted.push(event);
        }
        if (wanted.length) {
          this.sink!.write(this.context.joins.get(wanted, this.joinGroup));
          this.lastWriteAt = performance.now();
        }
        this.account(this.sink!.bufferedBytes);
        if (events.length && recent.after(this.userId, this.lastId, 1).length) {
          if (!(await this.drained())) return;
          continue;
        }
        this.state = 'live';
        this.feed.enter(this);
        return;
      }
    } catch {
      this.close('error');
    }
  }

  /**
   * Pages through the log after lastId up to its end, paced by the socket; false
   * when the stream ended meanwhile. Each page holds a log slot until the socket
   * has taken it, so at most that many pages of rows are in memory at once.
   * Afterwards the recent events hold everything this stream has not sent
   * (it subscribed before the reads), unless they evict it.
   */
  private async replayLog(): Promise<boolean> {
    const { store, recent, logSlots } = this.context;
    for (;;) {
      const release = await logSlots.acquire();
      try {
        if (this.state !== 'catching-up') return false;
        const epoch = recent.epoch;
        const evictedBefore = recent.evictedFloorFor(this.userId);
        const rows = await store.listForUser(
          this.userId,
          this.lastId,
          this.selection.types,
          this.options.replayBatch,
          this.context.releasedUpTo(),
        );
        if (this.state !== 'catching-up') return false;
        const frames: Frames[] = [];
        for (const row of rows) {
          const event = new StreamEvent(row);
          if (event.id <= this.lastId) continue;
          this.lastId = event.id;
          if (matchesPayload(this.selection, event)) frames.push(event.frames);
        }
        if (frames.length) {
          this.sink!.write(Frames.join(frames));
          this.lastWriteAt = performance.now();
        }
        this.account(this.sink!.bufferedBytes);
        if (!(await this.drained())) return false;
        if (rows.length < this.options.replayBatch) {
          // Evicted events were read, so committed, before this query: it has handled them (sent, or not of our types).
          this.lastId = Math.max(this.lastId, evictedBefore);
          this.syncedEpoch = epoch;
          return true;
        }
      } finally {
        release();
      }
    }
  }

  /** Waits for the client to read what is queued; ends the stream as slow when it does not in time. */
  private async drained(): Promise<boolean> {
    const before = this.sink!.bufferedBytes;
    const ok = await this.sink!.waitForDrain(this.options.slowClientTimeoutMs);
    if (this.state !== 'catching-up') return false;
    if (!ok) {
      this.close(this.sink!.closed ? 'client' : 'slow');
      return false;
    }
    // No drain was due (the backlog is under the transport's mark) and nothing moved: give the socket a turn.
    if (before > 0 && this.sink!.bufferedBytes >= before) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.state !== 'catching-up') return false;
    }
    this.account(this.sink!.bufferedBytes);
    return true;
  }

  private keepAlive(): void {
    if (this.state === 'closed' || this.sink!.bufferedBytes > 0) return; // a backlog is proof enough of life
    this.sink!.write(': keep-alive\n\n');
  }

  private async reauthorize(): Promise<void> {
    let ok: boolean;
    try {
      ok = await this.stillAuthorized();
    } catch {
      return; // a database hiccup is not a revocation; try again next time
    }
    if (!ok) this.close('unauthorized');
  }
}
