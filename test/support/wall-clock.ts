// Real time for tests whose audio is paced by the wall clock (the sandbox
// caller, a browser): a ManualClock whose now and timers are the real ones.
import { ManualClock, type Timer } from '../../src/lib/clock.js';

export class WallClock extends ManualClock {
  override now() {
    return Date.now();
  }
  override setTimeout(fn: () => void, ms: number): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  }
}
