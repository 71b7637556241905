// Batcher: calls made in one event-loop turn run as one batch, each gets its own outcome.
import { describe, expect, it } from 'vitest';
import { Batcher, type Outcome } from '../../src/db/batcher.js';

describe('Batcher', () => {
  it('runs the calls of one turn as one batch and answers each with its own outcome, in order', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      batches.push(items);
      return items.map(
        (n): Outcome<number> =>
          n % 3 === 0 ? { ok: false, error: new Error(`no ${n}`) } : { ok: true, value: n * 10 },
      );
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => batcher.run(n)));
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      10,
      20,
      'no 3',
      40,
    ]);
    // A later turn is a new batch.
    expect(await batcher.run(5)).toBe(50);
    expect(batches).toEqual([[1, 2, 3, 4], [5]]);
  });

  it('splits at the largest batch size and rejects every call of a batch that throws', async () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      batches.push(items);
      if (items.includes(0)) throw new Error('batch failed');
      return items.map((n) => ({ ok: true, value: n }));
    }, 2);
    const results = await Promise.allSettled([1, 2, 3, 0, 5].map((n) => batcher.run(n)));
    expect(batches).toEqual([[1, 2], [3, 0], [5]]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled']);
  });
});
