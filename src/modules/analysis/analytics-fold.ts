// SQLite's half of GET /api/analytics/calls in one pass: an aggregate
// function (registered on the connection by the analytics store) that the
// store calls over the covering index's range of one account's calls,
// without a GROUP BY. SQLite sorts every row for a GROUP BY on a computed
// key (the local day) or on a column the index does not lead with, three
// times for the counts and the two latency histograms; folding here reads
// the range once, in index order, and sorts nothing. Its result is the same
// groups the GROUP BY queries give (PostgreSQL answers those with hash
// aggregates). It runs once per call row, so a row costs one Map look-up
// (its key) and a few additions into typed arrays.
export const ANALYTICS_FOLD = 'analytics_fold';

/** Groups by key: [key, tally, calls, seconds, cents], and per latency percentile [key, bins, calls of each bin]. */
export interface FoldResult {
  counts: Array<[string | number | null, number | null, number, number, number]>;
  p50: Array<[string | number | null, number[], number[]]>;
  p95: Array<[string | number | null, number[], number[]]>;
}

type Key = string | number | null;
type Cell = string | number | bigint | null;

/** Tallies are 8 bits (tally.ts); slot 256 holds the calls not tallied yet (null). */
const UNTALLIED = 256;
const TALLY_SLOTS = 257;

/**
 * Calls per 10 ms bin: an array up to BINNED_MAX (41 s; at most 16 KB per
 * key and percentile, 400 days of them 13 MB), a Map past it (a stray
 * figure costs no memory).
 */
const BINNED_MAX = 4096;
export class Histogram {
  private counts = new Int32Array(128);
  private beyond: Map<number, number> | null = null;
  /** Counts `calls` calls (default one) in `bin`. */
  add(bin: number, calls = 1): void {
    if (bin < 0 || bin >= BINNED_MAX || !Number.isInteger(bin)) {
      this.beyond ??= new Map();
      this.beyond.set(bin, (this.beyond.get(bin) ?? 0) + calls);
      return;
    }
    if (bin >= this.counts.length) {
      const grown = new Int32Array(Math.min(BINNED_MAX, Math.max(bin + 1, this.counts.length * 2)));
      grown.set(this.counts);
      this.counts = grown;
    }
    this.counts[bin]! += calls;
  }
  /** The bins with calls (those up to BINNED_MAX in order) and their calls; null when none. */
  arrays(): [number[], number[]] | null {
    const bins: number[] = [];
    const calls: number[] = [];
    for (let bin = 0; bin < this.counts.length; bin++)
      if (this.counts[bin]) {
        bins.push(bin);
        calls.push(this.counts[bin]!);
      }
    for (const [bin, n] of this.beyond ?? []) {
      bins.push(bin);
      calls.push(n);
    }
    return bins.length ? [bins, calls] : null;
  }
}

/**
 * Adds each integer of a PostgreSQL integer array's text (`{41,-3,120}`, no nulls) to the histogram: the
 * PostgreSQL half of the analytics store sends each group's latency bins so.
 */
export function addIntegers(text: string, into: Histogram): void {
  let n = 0;
  let negative = false;
  let digits = false;
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      digits = true;
    } else if (c === 45) negative = true;
    else {
      // ',' or the closing '}'.
      if (digits) into.add(negative ? -n : n);
      n = 0;
      negative = false;
      digits = false;
    }
  }
}

interface Group {
  key: Key;
  /** [calls, seconds, cents] per tally slot. */
  counts: Float64Array;
  p50: Histogram;
  p95: Histogram;
}

interface FoldState {
  index: Map<Key, Group>;
}

const num = (v: Cell) => (v === null ? null : Number(v));

/**
 * The aggregate's arguments, per call row: the grouping key, the tally, the
 * seconds and cents (null adds nothing, as SQL's sum), and the two latency
 * bins (null: not counted in that histogram).
 */
export const analyticsFold = {
  start: (): FoldState => ({ index: new Map() }),
  step(state: FoldState, key: Cell, tally: Cell, seconds: Cell, cents: Cell, p50Bin: Cell, p95Bin: Cell): FoldState {
    const k = typeof key === 'bigint' ? Number(key) : key;
    let group = state.index.get(k);
    if (!group) {
      group = { key: k, counts: new Float64Array(TALLY_SLOTS * 3), p50: new Histogram(), p95: new Histogram() };
      state.index.set(k, group);
    }
    const t = tally === null ? UNTALLIED : Number(tally);
    if (!(t >= 0 && t <= UNTALLIED && Number.isInteger(t))) throw new Error(`analytics_fold: tally ${t} is not 8 bits`);
    const slot = t * 3;
    group.counts[slot]! += 1;
    if (seconds !== null) group.counts[slot + 1]! += Number(seconds);
    if (cents !== null) group.counts[slot + 2]! += Number(cents);
    const b50 = num(p50Bin);
    if (b50 !== null) group.p50.add(b50);
    const b95 = num(p95Bin);
    if (b95 !== null) group.p95.add(b95);
    return state;
  },
  /** JSON text: SQLite returns text, numbers and null only. */
  result(state: FoldState): string {
    const result: FoldResult = { counts: [], p50: [], p95: [] };
    for (const { key, counts, p50, p95 } of state.index.values()) {
      for (let t = 0; t < TALLY_SLOTS; t++) {
        const calls = counts[t * 3]!;
        if (calls) result.counts.push([key, t === UNTALLIED ? null : t, calls, counts[t * 3 + 1]!, counts[t * 3 + 2]!]);
      }
      const h50 = p50.arrays();
      if (h50) result.p50.push([key, ...h50]);
      const h95 = p95.arrays();
      if (h95) result.p95.push([key, ...h95]);
    }
    return JSON.stringify(result);
  },
};
