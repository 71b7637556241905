// What the streams of one instance share for delivery: the write scheduler
// (coalescing), the live feeds (one per user and selection: each event is
// queued and framed once, not once per stream), the bound on everyone's queued
// bytes, and the slots for log replays. See docs/decisions/events.md
// ("Delivery at scale").
import type { Frames, StreamEvent } from './stream-event.js';

export { Slots } from '../../lib/slots.js';

/** Something with frames waiting to be written (a live feed). */
export interface Flushable {
  /** When it last wrote (performance.now()); -Infinity while a write pass over it is unfinished. */
  readonly lastWriteAt: number;
  /** Writes what is pending; false when it stopped at `until` (performance.now()) and must be called again. */
  flush(now: number, until: number): boolean | undefined;
}

/**
 * A round cut short takes the events that arrived meanwhile only while all of them together stay under this: each
 * time it does, they are joined again (one copy for all the members left), which is nothing next to the members'
 * writes of a short round, but grows with the square of a round that has fallen seconds behind (then every write
 * is large anyway and they wait for the next round, as before). 64 KiB, not 256: with 256 the fan-out bench's
 * server held ~25 MB more (joins of up to 256 KiB, one per slice, and their suffixes in the next round).
 */
const MAX_EXTENDED_ROUND_BYTES = 64 * 1024;

function bytesOf(...lists: (readonly StreamEvent[])[]): number {
  let bytes = 0;
  for (const list of lists) for (const event of list) bytes += event.frames.raw.length;
  return bytes;
}

/**
 * A round's frames: all its events joined once for every member, and each tail of them (the events after the first
 * `index`) joined once for every member that already has the first `index`: the members a cut-short round reached
 * with the events that arrived meanwhile get the rest in the next round. One lookup by index per member, not a
 * join-cache key built and hashed per member (that was ~5% of the server's CPU with 5,000 streams).
 */
export class RoundFrames {
  private tails: Map<number, Frames> | null = null;

  constructor(
    /** The round's events, in id order. */
    readonly events: readonly StreamEvent[],
    readonly all: Frames,
    private readonly join: (events: readonly StreamEvent[]) => Frames,
  ) {}

  /** The frames of the events from `index` on (index < the round's event count). */
  from(index: number): Frames {
    if (index === 0) return this.all;
    let frames = this.tails?.get(index);
    if (!frames) (this.tails ??= new Map()).set(index, (frames = this.join(this.events.slice(index))));
    return frames;
  }
}

/** A live stream of a feed. */
export interface FeedMember {
  /**
   * Writes the round's events it has not sent (ids above its position; the
   * round is in id order), or leaves the feed when its client is behind.
   * `round` joins them once for all members (`round.from(i)`: the events from i on).
   * A member that left the feed since the round began does nothing: the feed does not look it up again.
   */
  flushFeed(round: RoundFrames, now: number): void;
}

/**
 * The live streams of one user and one selection on this instance. The broker
 * hands each accepted event to the feed once (not to each stream); the
 * scheduler flushes the feed as one unit: every member writes the same joined
 * Buffer, in one write each. Only live streams are members: one that is
 * catching up (opening, or fell behind) leaves, and reads what it missed from
 * the recent events, where every event is before it reaches a feed. So the
 * feed holds events only until its next flush (one window), whatever its
 * members' clients do.
 *
 * A round cut into time slices (thousands of members) takes the events that
 * arrived between its slices to the members it has not reached yet, in their
 * one write of the round: a member is then at most one round behind an event,
 * not up to two (the rest of the round, then its place in the next).
 */
export class LiveFeed implements Flushable {
  private events: StreamEvent[] = [];
  private readonly members = new Set<FeedMember>();
  /**
   * A flush cut short by the scheduler's time slice: its events, frames and the members still to write.
   * `taken` is how many of the pending events (those that arrived since it began) it carries too.
   */
  private round: { frames: RoundFrames; members: FeedMember[]; at: number; base: StreamEvent[]; taken: number } | null =
    null;
  private wroteAt = -Infinity;
  /** Streams (live or not) holding this feed: it is dropped from the registry at zero. */
  holders = 0;

  constructor(
    readonly userId: string,
    private readonly scheduler: WriteScheduler,
    private readonly join: (events: readonly StreamEvent[]) => Frames,
  ) {}

  get lastWriteAt(): number {
    return this.round ? -Infinity : this.wroteAt;
  }

  get memberCount(): number {
    return this.members.size;
  }

  /** Called by the broker, once per accepted event of this user, in increasing id order. */
  deliver(event: StreamEvent): void {
    if (this.members.size === 0 || event.userId !== this.userId) return; // nobody live: a catch-up reads the recent events
    const last = this.events.length ? this.events[this.events.length - 1].id : 0;
    if (event.id <= last) return; // never out of order, never twice
    this.events.push(event);
    if (this.events.length === 1) this.scheduler.mark(this);
  }

  /** A stream that went live: it gets every event delivered from now on. */
  enter(member: FeedMember): void {
    this.members.add(member);
  }

  /** A stream that is closing or catching up. */
  leave(member: FeedMember): void {
    this.members.delete(member);
    if (this.members.size === 0 && !this.round) {
      this.events = [];
      this.scheduler.forget(this);
    }
  }

  private framesOf(events: readonly StreamEvent[]): RoundFrames {
    return new RoundFrames(events, this.join(events), this.join);
  }

  flush(now: number, until: number): boolean {
    if (!this.round) {
      if (this.events.length === 0) return true;
      const events = this.events;
      this.events = [];
      this.wroteAt = now;
      this.round = { frames: this.framesOf(events), members: [...this.members], at: 0, base: events, taken: 0 };
    } else if (
      this.events.length > this.round.taken &&
      this.round.at < this.round.members.length &&
      bytesOf(this.round.base, this.events) <= MAX_EXTENDED_ROUND_BYTES
    ) {
      // Events that arrived while this round was cut short go out with it to the members it has not reached yet
      // (the same one write each), instead of waiting for the whole round to end and the next to reach them. They
      // stay pending for the next round: the members already written get them then, the others skip what they have.
      const round = this.round;
      round.frames = this.framesOf(round.base.concat(this.events));
      round.taken = this.events.length;
    }
    const round = this.round;
    while (round.at < round.members.length) {
      const member = round.members[round.at++];
      // A member that left meanwhile (closed, or behind) ignores it (no lookup in the members per write); one that
      // joined reads the round's events from the recent events.
      member.flushFeed(round.frames, now);
      if ((round.at & 63) === 0 && round.at < round.members.length && performance.now() > until) return false;
    }
    this.round = null;
    if (this.events.length) this.scheduler.mark(this); // arrived during a cut-short round: the next window
    return true;
  }
}

/**
 * Coalesces writes, per live feed: a feed that has not written for the window
 * writes at the end of the broker's batch; one that has waits until the window
 * has passed since its last write, and everything that arrived meanwhile goes
 * out as one write per member stream (one syscall instead of one per event),
 * all members writing the same joined Buffer. One timer for the whole instance;
 * it also keeps the registry of live feeds.
 *
 * A feed whose round of writes takes longer than the window (thousands of
 * members) starts its next round as soon as the last ends: a late round makes
 * the next one carry more events per write by itself. The window does not
 * widen under load: it used to (to twice the last pass, up to 250 ms), but
 * that never engaged while rounds ran back to back, and made to engage it
 * lengthened the wait (p99 1.3–2×; docs/decisions/events.md, "Coalescing").
 *
 * A pass yields to the event loop every sliceMs (inside a feed's flush too) so
 * requests (the writes that create the events) are not held up behind it, and
 * it yields for two turns: a request read in the first defers its own work to
 * the end of that turn (setImmediate: group commit, the batcher), which then
 * runs before the pass goes on instead of a whole slice after it. With one turn,
 * a create waited for two slices (the one its request arrived in, and the one
 * queued before its commit); with two, for one. Slices are 5 ms: with 5,000
 * streams of one user at 100 events/s, the writer's PUT p50 went from 19 to
 * 5 ms and delivery p50 from 56–60 to 39–50 ms; p99 was 87–95 ms in the first
 * three runs and 91–169 ms over a noisier half hour, when the floor's was
 * 129–225 (bench/ANALYSIS.md, session 28). 2 ms slices (with one
 * turn) made the rounds longer: every turn of the loop has its own cost.
 */
export class WriteScheduler {
  private readonly dirty = new Set<Flushable>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private continuing = false;

  constructor(
    /** 0 turns gathering off altogether. */
    readonly windowMs: number,
    readonly sliceMs = 5,
  ) {}

  /** The live feeds, by user and selection (JoinCache group). */
  private readonly feeds = new Map<string, LiveFeed>();

  /** The feed of one user and selection, created on first use; release() when the stream is done with it. */
  holdFeed(
    userId: string,
    group: string,
    join: (events: readonly StreamEvent[]) => Frames,
  ): { feed: LiveFeed; release: () => void } {
    let feed = this.feeds.get(group);
    if (!feed) this.feeds.set(group, (feed = new LiveFeed(userId, this, join)));
    feed.holders += 1;
    const held = feed;
    let released = false;
    return {
      feed,
      release: () => {
        if (released) return;
        released = true;
        held.holders -= 1;
        if (held.holders === 0 && this.feeds.get(group) === held) {
          this.feeds.delete(group);
          this.dirty.delete(held);
        }
      },
    };
  }

  /** Feeds held by open streams (for tests). */
  get feedCount(): number {
    return this.feeds.size;
  }

  mark(stream: Flushable): void {
    this.dirty.add(stream);
  }

  forget(stream: Flushable): void {
    this.dirty.delete(stream);
  }

  /** Writes every stream whose window has passed; arms the timer for the rest. */
  flush(): void {
    if (this.continuing || this.dirty.size === 0) return; // a pass in progress picks the new ones up
    const started = performance.now();
    const window = this.windowMs;
    let nextDue = Infinity;
    let now = started;
    let count = 0;
    const until = started + this.sliceMs;
    for (const stream of this.dirty) {
      const due = stream.lastWriteAt + window;
      if (due <= now) {
        this.dirty.delete(stream);
        const done = stream.flush(now, until) !== false;
        if (!done) this.dirty.add(stream); // a feed cut short: it goes on first thing in the next slice
        if (!done || ++count % 64 === 0) {
          now = performance.now();
          if (!done || now > until) {
            // Let requests in, and what they defer to the end of their turn, then go on with this pass.
            this.continuing = true;
            setImmediate(() =>
              setImmediate(() => {
                this.continuing = false;
                this.flush();
              }),
            );
            return;
          }
        }
      } else if (due < nextDue) nextDue = due;
    }
    if (nextDue === Infinity || (this.timer && this.timerDue <= nextDue)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = nextDue;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerDue = Infinity;
        this.flush();
      },
      Math.max(1, nextDue - performance.now()),
    );
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.dirty.clear();
    this.feeds.clear();
  }
}

/**
 * The sum of every stream's unsent bytes on this instance, as last seen by each
 * stream (refreshed on every write and on drain). Past `limit`, a stream with a
 * backlog stops queueing and catches up once it has drained.
 */
export class BufferBudget {
  total = 0;
  constructor(readonly limit: number) {}

  get exceeded(): boolean {
    return this.total > this.limit;
  }
}

/**
 * Concatenations of events, kept for a while by the ids they hold: streams at
 * the same position (live streams flushed with the same pending events, or
 * many streams of one user catching up together) write the same Buffer.
 */
export class JoinCache {
  private readonly entries = new Map<string, Frames>();

  constructor(
    private readonly join: (list: readonly Frames[]) => Frames,
    private readonly maxEntries = 64,
  ) {}

  /**
   * `group` names the user and selection the events were picked for: a stream's pending or catch-up events are every
   * event of its user and selection between the first and the last id, so those two ids and the count identify the
   * list, and the key costs O(1) instead of a string of every id (per stream, per flush: 5,000 streams of one user).
   */
  get(events: readonly { id: number; frames: Frames }[], group?: string): Frames {
    if (events.length === 1) return events[0].frames;
    const key =
      group === undefined
        ? events.map((e) => e.id).join(',')
        : `${group}\u0000${events[0].id}\u0000${events[events.length - 1].id}\u0000${events.length}`;
    let frames = this.entries.get(key);
    if (frames) {
      this.entries.delete(key); // most recently used last
    } else {
      frames = this.join(events.map((e) => e.frames));
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(key, frames);
    return frames;
  }
}
