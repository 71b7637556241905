// SQLite's half of GET /api/analytics/calls in one pass: an aggregate
// function (registered on the connection by db/database.ts) that the store
// calls over the covering index's range of one account's calls, without a
// GROUP BY. SQLite sorts every row for a GROUP BY on a computed key (the
// local day) or on a column the index does not lead with, three times for
// the counts and the two latency histograms; folding here reads the range
// once, in index order, and sorts nothing. Its result is the same groups
// the GROUP BY queries give (PostgreSQL answers those with hash aggregates).
export const ANALYTICS_FOLD = 'analytics_fold';

/** Groups by key: [key, tally, calls, seconds, cents], [key, bin, calls] per latency percentile. */
export interface FoldResult {
  counts: Array<[string | number | null, number | null, number, number, number]>;
  p50: Array<[string | number | null, number, number]>;
  p95: Array<[string | number | null, number, number]>;
}

interface FoldState {
  counts: Map<string | number | null, Map<number | null, [number, number, number]>>;
  p50: Map<string | number | null, Map<number, number>>;
  p95: Map<string | number | null, Map<number, number>>;
}

type Cell = string | number | bigint | null;
const num = (v: Cell) => (v === null ? null : Number(v));

function inner<K, V>(outer: Map<string | number | null, Map<K, V>>, key: string | number | null): Map<K, V> {
  let m = outer.get(key);
  if (!m) outer.set(key, (m = new Map()));
  return m;
}

/**
 * The aggregate's arguments, per call row: the grouping key, the tally, the
 * seconds and cents (null adds nothing, as SQL's sum), and the two latency
 * bins (null: not counted in that histogram).
 */
export const analyticsFold = {
  start: (): FoldState => ({ counts: new Map(), p50: new Map(), p95: new Map() }),
  step(state: FoldState, key: Cell, tally: Cell, seconds: Cell, cents: Cell, p50Bin: Cell, p95Bin: Cell): FoldState {
    const k = typeof key === 'bigint' ? Number(key) : key;
    const byTally = inner(state.counts, k);
    const t = num(tally);
    let group = byTally.get(t);
    if (!group) byTally.set(t, (group = [0, 0, 0]));
    group[0] += 1;
    group[1] += num(seconds) ?? 0;
    group[2] += num(cents) ?? 0;
    const b50 = num(p50Bin);
    if (b50 !== null) {
      const bins = inner(state.p50, k);
      bins.set(b50, (bins.get(b50) ?? 0) + 1);
    }
    const b95 = num(p95Bin);
    if (b95 !== null) {
      const bins = inner(state.p95, k);
      bins.set(b95, (bins.get(b95) ?? 0) + 1);
    }
    return state;
  },
  /** JSON text: SQLite returns text, numbers and null only. */
  result(state: FoldState): string {
    const result: FoldResult = { counts: [], p50: [], p95: [] };
    for (const [key, byTally] of state.counts)
      for (const [tally, [calls, seconds, cents]] of byTally) result.counts.push([key, tally, calls, seconds, cents]);
    for (const [key, bins] of state.p50) for (const [bin, calls] of bins) result.p50.push([key, bin, calls]);
    for (const [key, bins] of state.p95) for (const [bin, calls] of bins) result.p95.push([key, bin, calls]);
    return JSON.stringify(result);
  },
};
