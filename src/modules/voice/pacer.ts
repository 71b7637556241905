// One pacing schedule for every audio sink on a clock (one per process for the
// system clock). Each sink asks for a wake-up at its next frame's due time;
// the pacer keeps a single clock timer at the earliest one instead of one
// timer per call, and `poll()` sends what has fallen due from inside any I/O
// callback (the sinks call it on every caller frame of any call). At 50 calls
// an event-loop turn that reads the sockets runs for tens of ms: a timer waits
// for the whole turn, a poll between two callbacks of it does not. A frame
// still leaves only when it is due, and its lateness is still measured
// against its own slot when it leaves. While it has wake-ups pending, its poll
// also runs at the urgent-work points of long synchronous runs (a group-commit
// batch, src/lib/urgent-work.ts). There it runs, early, the wake-ups due within
// the next frame period too (URGENT_AHEAD_MS): the run goes on after the point
// for as long as its next unit takes (a call recording's write on SQLite holds
// the loop 10-15 ms), and a frame sent 20 ms before its time only sits longer in
// the carrier's buffer, while one sent late may leave a gap.
import type { Timer, TimerClock } from '../../lib/clock.js';
import { addUrgentPoll } from '../../lib/urgent-work.js';

/** How far ahead an urgent-work point runs wake-ups: one 20 ms frame. */
export const URGENT_AHEAD_MS = 20;

/** A wake-up; `aheadMs` > 0 when it runs that much before its time at most (an urgent-work point). */
export type WakeUp = (aheadMs: number) => void;

interface Entry {
  at: number;
  seq: number;
  fn: WakeUp;
  cancelled: boolean;
}

export class Pacer {
  /** Pending wake-ups, earliest first (ties in the order they were asked for). */
  private entries: Entry[] = [];
  private seq = 0;
  private timer: Timer | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private readonly urgentPoll = () => this.poll(URGENT_AHEAD_MS);
  private removeUrgentPoll: (() => void) | null = null;

  /**
   * `onError` hears a wake-up that threw; the others of the pass still run, and the poll's caller (another call's
   * frame handling) never sees it. By default it is thrown again on its own, as a throwing timer callback was.
   */
  constructor(
    private readonly clock: TimerClock,
    private readonly onError: (error: unknown) => void = (error) =>
      queueMicrotask(() => {
        throw error;
      }),
  ) {}

  /** Runs `fn` once the clock reaches `at` (from the shared timer, or from a poll that comes first; an urgent-work point's up to URGENT_AHEAD_MS before). */
  schedule(fn: WakeUp, at: number): Timer {
    const entry: Entry = { at, seq: this.seq++, fn, cancelled: false };
    // Binary search for the first entry due later: the list stays sorted by (at, seq).
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.entries[mid]!.at <= at) lo = mid + 1;
      else hi = mid;
    }
    this.entries.splice(lo, 0, entry);
    if (!this.running) this.arm();
    return { cancel: () => void (entry.cancelled = true) };
  }

  /** Runs every wake-up that is due now, or within `aheadMs`. Cheap when none is: one clock read. */
  poll(aheadMs = 0) {
    if (this.running || !this.entries.length || this.entries[0]!.at > this.clock.now() + aheadMs) return;
    this.run(aheadMs);
  }

  /** Wake-ups not yet run or cancelled (tests). */
  get pending() {
    return this.entries.filter((e) => !e.cancelled).length;
  }

  private run(aheadMs = 0) {
    this.running = true;
    try {
      // A wake-up may schedule the sink's next one; it runs in this pass too if it is already due (within aheadMs).
      while (this.entries.length && this.entries[0]!.at <= this.clock.now() + aheadMs) {
        const entry = this.entries.shift()!;
        if (entry.cancelled) continue;
        try {
          entry.fn(aheadMs);
        } catch (error) {
          this.onError(error);
        }
      }
    } finally {
      this.running = false;
      this.arm();
    }
  }

  /** One clock timer, at the earliest pending wake-up. */
  private arm() {
    while (this.entries.length && this.entries[0]!.cancelled) this.entries.shift();
    const next = this.entries[0]?.at ?? Number.POSITIVE_INFINITY;
    if (next === Number.POSITIVE_INFINITY) {
      this.removeUrgentPoll?.();
      this.removeUrgentPoll = null;
    } else this.removeUrgentPoll ??= addUrgentPoll(this.urgentPoll);
    if (next === this.timerAt) return;
    this.timer?.cancel();
    this.timer = null;
    this.timerAt = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = this.clock.setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Number.POSITIVE_INFINITY;
        this.run();
      },
      Math.max(0, next - this.clock.now()),
    );
  }
}

const pacers = new WeakMap<TimerClock, Pacer>();

/** The pacer of a clock: every sink on the same clock shares it. */
export function pacerFor(clock: TimerClock): Pacer {
  let pacer = pacers.get(clock);
  if (!pacer) pacers.set(clock, (pacer = new Pacer(clock)));
  return pacer;
}
