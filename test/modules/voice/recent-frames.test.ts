import { describe, expect, it } from 'vitest';
import { RecentFrames } from '../../../src/modules/voice/recent-frames.js';

const frame = (n: number) => Int16Array.of(n);
const values = (frames: Int16Array[]) => frames.map((f) => f[0]);

describe('RecentFrames (the replay buffer of a call)', () => {
  it('keeps the newest frames up to its capacity, oldest first, across its compactions', () => {
    const recent = new RecentFrames(3);
    expect(recent.length).toBe(0);
    expect(recent.last(5)).toEqual([]);
    for (let i = 1; i <= 2; i++) recent.push(frame(i));
    expect(values(recent.last(5))).toEqual([1, 2]);
    // Pushed far past several compactions: always the last three, in order.
    for (let i = 3; i <= 20; i++) {
      recent.push(frame(i));
      expect(recent.length).toBe(3);
      expect(values(recent.last(3))).toEqual([i - 2, i - 1, i]);
    }
  });

  it('gives the newest `count` of them, none for zero or less', () => {
    const recent = new RecentFrames(250);
    for (let i = 0; i < 600; i++) recent.push(frame(i));
    expect(recent.length).toBe(250);
    expect(values(recent.last(2))).toEqual([598, 599]);
    expect(values(recent.last(1000))[0]).toBe(350);
    expect(recent.last(0)).toEqual([]);
    expect(recent.last(-4)).toEqual([]);
  });

  it('with no capacity keeps nothing', () => {
    const recent = new RecentFrames(0);
    recent.push(frame(1));
    expect(recent.length).toBe(0);
    expect(recent.last(1)).toEqual([]);
  });
});
