// The broker's memory of recent events: every event the tail loop reads, in
// read order, up to a byte budget, indexed by user. A stream that fell a little
// behind (or one that has just replayed the log) catches up from here: the
// frames are the broker's shared Buffers, and 5,000 streams of one user cost
// no query and no re-framing. When the ring no longer reaches back far enough
// for a stream, that stream reads the log instead.
//
// Completeness: from `reset(floor)` on, the tail loop adds every event it
// releases (ids above the floor; see the broker's release order). So for a
// user, every event read since the reset with an id above floorFor(user) is
// here, in increasing id order (the broker releases events in id order).
import type { StreamEvent } from './stream-event.js';

interface UserEvents {
  events: StreamEvent[];
  head: number;
  /** The highest id of this user's that was evicted: ids up to it may be missing. */
  evictedUpTo: number;
}

export class RecentEvents {
  private queue: StreamEvent[] = [];
  private head = 0;
  private bytes = 0;
  private readonly byUser = new Map<string, UserEvents>();
  /** Highest id evicted among users whose entry is gone (a user seen again starts from it). */
  private droppedUpTo = 0;
  private floor = 0;
  /** Bumped on every reset: a stream that synced with an older epoch must sync again. */
  epoch = 0;

  constructor(private readonly maxBytes: number) {}

  /** Forgets everything: the tail loop moved past events without keeping them (ids only). */
  reset(floor: number): void {
    this.queue = [];
    this.head = 0;
    this.bytes = 0;
    this.byUser.clear();
    this.droppedUpTo = 0;
    this.floor = floor;
    this.epoch += 1;
  }

  add(event: StreamEvent): void {
    if (this.maxBytes <= 0) {
      this.evicted(event, this.entry(event.userId));
      return;
    }
    const entry = this.entry(event.userId);
    const { events } = entry;
    if (events.length > entry.head && events[events.length - 1].id > event.id) {
      // A late, lower id (not expected: the broker releases events in id order): keep the list sorted.
      let at = events.length - 1;
      while (at > entry.head && events[at - 1].id > event.id) at -= 1;
      events.splice(at, 0, event);
    } else events.push(event);
    this.queue.push(event);
    this.bytes += event.retainedBytes;
    while (this.bytes > this.maxBytes && this.head < this.queue.length) this.evictOldest();
  }

  /** Ids above this are all here (or not read yet) for the user, whatever stream asks. */
  floorFor(userId: string): number {
    return Math.max(this.floor, this.evictedFloorFor(userId));
  }

  /** For a stream that has replayed the log after subscribing: only evictions can have lost its events. */
  evictedFloorFor(userId: string): number {
    return this.byUser.get(userId)?.evictedUpTo ?? this.droppedUpTo;
  }

  /** The user's events with id above `afterId`, oldest first, up to about `maxBytes` (at least one). */
  after(userId: string, afterId: number, maxBytes = Infinity): StreamEvent[] {
    const entry = this.byUser.get(userId);
    if (!entry) return [];
    const { events } = entry;
    let lo = entry.head;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (events[mid].id <= afterId) lo = mid + 1;
      else hi = mid;
    }
    const out: StreamEvent[] = [];
    let bytes = 0;
    for (let i = lo; i < events.length && (out.length === 0 || bytes < maxBytes); i++) {
      out.push(events[i]);
      bytes += events[i].frames.byteLength;
    }
    return out;
  }

  get size(): number {
    return this.queue.length - this.head;
  }

  get retainedBytes(): number {
    return this.bytes;
  }

  private entry(userId: string): UserEvents {
    let entry = this.byUser.get(userId);
    if (!entry) this.byUser.set(userId, (entry = { events: [], head: 0, evictedUpTo: this.droppedUpTo }));
    return entry;
  }

  private evictOldest(): void {
    const event = this.queue[this.head];
    this.queue[this.head] = undefined as unknown as StreamEvent;
    this.head += 1;
    this.bytes -= event.retainedBytes;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const entry = this.byUser.get(event.userId)!;
    // Read order is id order within a user, so the user's oldest is this event (else: find it).
    if (entry.events[entry.head] === event) {
      entry.events[entry.head] = undefined as unknown as StreamEvent;
      entry.head += 1;
    } else {
      const at = entry.events.indexOf(event, entry.head);
      if (at >= 0) entry.events.splice(at, 1);
    }
    if (entry.head > 256 && entry.head * 2 > entry.events.length) {
      entry.events = entry.events.slice(entry.head);
      entry.head = 0;
    }
    this.evicted(event, entry);
  }

  private evicted(event: StreamEvent, entry: UserEvents): void {
    entry.evictedUpTo = Math.max(entry.evictedUpTo, event.id);
    if (entry.head >= entry.events.length) {
      this.byUser.delete(event.userId);
      this.droppedUpTo = Math.max(this.droppedUpTo, entry.evictedUpTo);
    }
  }
}
