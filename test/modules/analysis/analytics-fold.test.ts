// The SQLite aggregate behind GET /api/analytics/calls (analytics-fold.ts) on
// its own: the groups a GROUP BY would give, with SQL's sums (null adds
// nothing) and the latency histograms counting only calls with a latency.
import { describe, expect, it } from 'vitest';
import {
  addIntegers,
  analyticsFold,
  type FoldResult,
  Histogram,
} from '../../../src/modules/analysis/analytics-fold.js';

const fold = (rows: Array<Parameters<typeof analyticsFold.step> extends [unknown, ...infer A] ? A : never>) => {
  let state = analyticsFold.start();
  for (const row of rows) state = analyticsFold.step(state, ...row);
  return JSON.parse(analyticsFold.result(state)) as FoldResult;
};

describe('analyticsFold', () => {
  it('groups by key and tally, sums seconds and cents as SQL does, and bins latencies per key', () => {
    const result = fold([
      [20_000n, 3, 60, 10, 60, 90],
      [20_000, 3, 20, null, 60, null],
      [20_000, null, null, null, null, null],
      [20_001, 3, 5, 2, 50, 70],
    ]);
    expect(result.counts).toEqual([
      [20_000, 3, 2, 80, 10],
      [20_000, null, 1, 0, 0],
      [20_001, 3, 1, 5, 2],
    ]);
    expect(result.p50).toEqual([
      [20_000, [60], [2]],
      [20_001, [50], [1]],
    ]);
    expect(result.p95).toEqual([
      [20_000, [90], [1]],
      [20_001, [70], [1]],
    ]);
  });

  it('keeps a null key (no campaign) apart from the others, and folds no rows to no groups', () => {
    expect(
      fold([
        [null, 1, 1, 1, null, null],
        ['camp-1', 1, 2, 2, null, null],
      ]).counts,
    ).toEqual([
      [null, 1, 1, 1, 1],
      ['camp-1', 1, 1, 2, 2],
    ]);
    expect(fold([])).toEqual({ counts: [], p50: [], p95: [] });
  });

  it('counts a latency past its arrays (over 41 s) and one that grows them, exactly', () => {
    const result = fold([
      [1, 1, 0, 0, 90_000, 120_000],
      [1, 1, 0, 0, 300, 4_095],
      [1, 1, 0, 0, 90_000, 0],
    ]);
    expect(result.p50).toEqual([[1, [300, 90_000], [1, 2]]]);
    expect(result.p95).toEqual([[1, [0, 4_095, 120_000], [1, 1, 1]]]);
  });

  it('refuses a tally that is not 8 bits rather than count it somewhere', () => {
    expect(() => fold([[1, 256 * 2, 0, 0, null, null]])).toThrow(/not 8 bits/);
    expect(() => fold([[1, -1, 0, 0, null, null]])).toThrow(/not 8 bits/);
  });

  it("reads PostgreSQL's text of an integer array into a histogram: repeats, negatives, past the arrays, one, none", () => {
    const h = new Histogram();
    addIntegers('{41,7,41,-3,90000,0}', h);
    addIntegers('{12}', h);
    addIntegers('{}', h);
    expect(h.arrays()).toEqual([
      [0, 7, 12, 41, -3, 90_000],
      [1, 1, 1, 2, 1, 1],
    ]);
    const empty = new Histogram();
    addIntegers('{}', empty);
    expect(empty.arrays()).toBeNull();
  });
});
