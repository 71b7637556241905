// The real-time allowance on an injected clock: a token bucket at real time
// plus its allowance with a burst, and the flood meter beside it.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { CALLER_AUDIO_ALLOWANCE, RealTimeAllowance } from '../../../src/modules/voice/real-time-allowance.js';

describe('RealTimeAllowance', () => {
  it('takes real time and its 10 % allowance whole, however long', () => {
    const clock = new ManualClock(0);
    const audio = new RealTimeAllowance(clock, CALLER_AUDIO_ALLOWANCE);
    for (let i = 0; i < 30_000; i++) {
      clock.advance(20);
      expect(audio.take(1, 20)).toBe(1);
    }
    // 10 % faster than real time for a minute: still whole.
    for (let i = 0; i < 3000; i++) {
      clock.advance(20 / 1.1);
      audio.take(1, 20);
    }
    expect(audio.dropped).toBe(0);
    expect(audio.accepted).toBe(33_000 * 20);
    expect(audio.flooding).toBe(false);
  });

  it('takes a burst at once after a quiet time, then only what real time refills; the first items of a batch are the ones taken', () => {
    const clock = new ManualClock(0);
    const audio = new RealTimeAllowance(clock, { perSecond: 1000, allowance: 0.1, burst: 2000, floodAhead: 7000 });
    expect(audio.take(150, 20)).toBe(100);
    expect(audio.dropped).toBe(1000);
    expect(audio.take(1, 20)).toBe(0);
    clock.advance(1000);
    expect(audio.take(100, 20)).toBe(55);
    // A quiet minute banks no more than the burst.
    clock.advance(60_000);
    expect(audio.take(1000, 20)).toBe(100);
  });

  it('floods once arrivals run the set amount ahead of real time, counting dropped arrivals too; real time drains the meter', () => {
    const clock = new ManualClock(0);
    const audio = new RealTimeAllowance(clock, { perSecond: 1000, allowance: 0.1, burst: 2000, floodAhead: 7000 });
    // 2× real time, two seconds of audio every second: 2 s ahead after the first, one more each next second.
    let seconds = 0;
    while (!audio.flooding && seconds < 20) {
      clock.advance(1000);
      audio.take(100, 20);
      seconds++;
    }
    expect(seconds).toBe(7);
    // Real time afterwards drains it again: a sender that slowed down is no longer flooding.
    const calm = new RealTimeAllowance(clock, { perSecond: 1000, allowance: 0.1, burst: 2000, floodAhead: 7000 });
    calm.take(300, 20); // 6 s at once
    expect(calm.flooding).toBe(false);
    clock.advance(6000);
    calm.take(300, 20);
    expect(calm.flooding).toBe(false);
    calm.take(100, 20);
    expect(calm.flooding).toBe(true);
  });

  it('does not refill when the clock goes back', () => {
    const clock = new ManualClock(10_000);
    const messages = new RealTimeAllowance(clock, { perSecond: 50, allowance: 0, burst: 10, floodAhead: 100 });
    expect(messages.take(10)).toBe(10);
    clock.set(0);
    expect(messages.take(1)).toBe(0);
    clock.set(1000);
    expect(messages.take(100)).toBe(10);
  });
});
