// What a call's far end may send, paced to real time (issue 46: two web calls
// sent four hours of audio in 50 s). A token bucket refills at real time plus
// a small allowance and holds a burst, so network jitter and a short stall of
// either side pass whole, while a sender faster than that loses the excess
// (dropped, counted). Beside it, a meter of how far arrivals run ahead of real
// time (drained at real time, never below zero): past `floodAhead` the sender
// is flooding and the call is ended. Times come from the injected clock.
import type { Clock } from '../../lib/clock.js';

export interface AllowanceOptions {
  /** Units of real time per second (1000: milliseconds of audio). */
  perSecond: number;
  /** Share accepted over real time (0.1: 10 %). */
  allowance: number;
  /** Units accepted at once after a quiet time (the bucket's size). */
  burst: number;
  /** Flooding once arrivals run this many units ahead of real time. */
  floodAhead: number;
}

/**
 * Caller audio, in ms: real time + 10 %, a 2 s burst (a stalled event loop or
 * network hands over a second or two at once), flooding 7 s ahead of real
 * time (2× real time for 7 s; 100× for about 70 ms).
 */
export const CALLER_AUDIO_ALLOWANCE: AllowanceOptions = {
  perSecond: 1000,
  allowance: 0.1,
  burst: 2000,
  floodAhead: 7000,
};

/**
 * Messages that are not audio (marks, DTMF, hang-up): a far end echoes a few
 * marks a second and a burst of them after a `clear`; 50 a second with 200 at
 * once is far above that, flooding 500 ahead.
 */
export const CONTROL_MESSAGE_ALLOWANCE: AllowanceOptions = { perSecond: 50, allowance: 0, burst: 200, floodAhead: 500 };

export class RealTimeAllowance {
  private tokens: number;
  private ahead = 0;
  private last: number;
  /** Units accepted and dropped so far. */
  accepted = 0;
  dropped = 0;

  constructor(
    private readonly clock: Clock,
    private readonly options: AllowanceOptions,
  ) {
    this.tokens = options.burst;
    this.last = clock.now();
  }

  /** `count` items of `unit` units each arrived: how many of them (the first ones) are accepted. */
  take(count: number, unit = 1): number {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    const { perSecond, allowance, burst } = this.options;
    this.tokens = Math.min(burst, this.tokens + (elapsed * perSecond * (1 + allowance)) / 1000);
    this.ahead = Math.max(0, this.ahead - (elapsed * perSecond) / 1000) + count * unit;
    const admitted = Math.min(count, Math.floor(this.tokens / unit));
    this.tokens -= admitted * unit;
    this.accepted += admitted * unit;
    this.dropped += (count - admitted) * unit;
    return admitted;
  }

  /** The sender has run `floodAhead` units ahead of real time. */
  get flooding(): boolean {
    return this.ahead > this.options.floodAhead;
  }
}
