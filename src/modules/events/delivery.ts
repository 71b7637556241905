// What the streams of one instance share for delivery: the write scheduler
// (coalescing), the bound on everyone's queued bytes, and the slots for log
// replays. See docs/decisions/events.md ("Delivery at scale").
import type { Frames } from './stream-event.js';

export { Slots } from '../../lib/slots.js';

/** A stream with frames waiting to be written. */
export interface Flushable {
  /** When this stream last wrote frames (performance.now()). */
  readonly lastWriteAt: number;
  /** Writes what is pending. */
  flush(now: number): void;
}

/**
 * Coalesces writes: a stream that has not written for the window writes at the
 * end of the broker's batch; one that has waits until the window has passed
 * since its last write, and everything that arrived meanwhile goes out as one
 * write (one syscall instead of one per event). Streams at the same position
 * share the concatenated Buffer (JoinCache). One timer for the whole instance.
 *
 * Under load the window widens to twice the time a full pass of writes took
 * (up to maxWindowMs): with thousands of streams, each write costs a syscall,
 * and a fixed window would have the instance writing all the time, falling
 * further behind. A pass yields to the event loop every sliceMs so requests
 * (the writes that create the events) are not held up behind it.
 */
export class WriteScheduler {
  private readonly dirty = new Set<Flushable>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = Infinity;
  private continuing = false;
  /** CPU time of the current pass so far, and a smoothed figure of the last passes. */
  private passMs = 0;
  private passMsAverage = 0;

  constructor(
    readonly windowMs: number,
    /** 0 turns gathering off altogether. */
    readonly maxWindowMs = windowMs === 0 ? 0 : Math.max(windowMs, 250),
    readonly sliceMs = 10,
  ) {}

  /** The window now in force (widened under load). */
  get currentWindowMs(): number {
    return Math.min(this.maxWindowMs, Math.max(this.windowMs, 2 * this.passMsAverage));
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
    const window = this.currentWindowMs;
    let nextDue = Infinity;
    let now = started;
    let count = 0;
    for (const stream of this.dirty) {
      const due = stream.lastWriteAt + window;
      if (due <= now) {
        this.dirty.delete(stream);
        stream.flush(now);
        if (++count % 64 === 0) {
          now = performance.now();
          if (now - started > this.sliceMs) {
            // Let requests in, then go on with this pass.
            this.passMs += now - started;
            this.continuing = true;
            setImmediate(() => {
              this.continuing = false;
              this.flush();
            });
            return;
          }
        }
      } else if (due < nextDue) nextDue = due;
    }
    this.passMs += performance.now() - started;
    if (count > 0 || this.passMs > 0) {
      this.passMsAverage = this.passMsAverage * 0.7 + this.passMs * 0.3;
      this.passMs = 0;
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
    const key = group === undefined ? events.map((e) => e.id).join(',') : `${group}\u0000${events[0].id}\u0000${events[events.length - 1].id}\u0000${events.length}`;
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
