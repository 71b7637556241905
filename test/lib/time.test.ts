import { describe, expect, it } from 'vitest';
import { iso } from '../../src/lib/time.js';

describe('iso', () => {
  it('matches Date#toISOString at the edges', () => {
    const edges = [
      0,
      1,
      999,
      86_399_999,
      86_400_000,
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2026, 10, 22, 6, 5, 4, 30),
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -86_400_001,
      8.64e15,
    ];
    for (const ms of edges) expect(iso(ms)).toBe(new Date(ms).toISOString());
  });

  it('matches Date#toISOString for random instants, in and out of order', () => {
    for (let i = 0; i < 20_000; i++) {
      const ms = Math.floor(Math.random() * 4_102_444_800_000); // 1970–2100
      expect(iso(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('accepts bigint columns read as strings', () => {
    expect(iso('1700000000123' as unknown as number)).toBe('2023-11-14T22:13:20.123Z');
  });
});
