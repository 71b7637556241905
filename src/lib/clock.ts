/** Time source, injected so tests can move time forward (code expiry, TOTP steps). */
export interface Clock {
  now(): number;
}

/** A pending timer; cancel() is idempotent. */
export interface Timer {
  cancel(): void;
}

/** A clock that also schedules: live calls pace audio and wait on it, so tests can drive a whole call. */
export interface TimerClock extends Clock {
  setTimeout(fn: () => void, ms: number): Timer;
}

export const systemClock: TimerClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

/** Resolves after `ms` of the clock's time, or rejects with the signal's reason when it aborts first. */
export function sleep(clock: TimerClock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock tests can set and advance; its timers fire, in time order, as advance() passes them. */
export class ManualClock implements TimerClock {
  private timers: ManualTimer[] = [];
  private seq = 0;
  constructor(private ms = Date.now()) {}
  now() {
    return this.ms;
  }
  setTimeout(fn: () => void, ms: number): Timer {
    const timer: ManualTimer = { at: this.ms + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }
  /** Moves time forward, firing each due timer at its own time (timers set while firing fire too when due). */
  advance(ms: number) {
    const target = this.ms + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.timers)
        if (t.at <= target && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      if (!next) break;
      next.cancelled = true;
      this.ms = Math.max(this.ms, next.at);
      next.fn();
    }
    this.ms = target;
  }
  set(ms: number) {
    this.ms = ms;
  }
  /** Timers not yet fired or cancelled. */
  get pendingTimers() {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
