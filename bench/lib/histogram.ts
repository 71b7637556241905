// A small log-bucket latency histogram (1% wide buckets, microseconds) that
// child processes fill and send to the orchestrator, which merges them.
const GROWTH = Math.log(1.01);
const BUCKETS = 2000; // up to ~4e8 µs

export type Histogram = number[];

export const newHistogram = (): Histogram => new Array<number>(BUCKETS).fill(0);

export function record(h: Histogram, micros: number): void {
  const b = micros < 1 ? 0 : Math.min(BUCKETS - 1, Math.floor(Math.log(micros) / GROWTH) + 1);
  h[b] += 1;
}

export function merge(into: Histogram, from: Histogram): Histogram {
  for (let i = 0; i < BUCKETS; i++) into[i] += from[i];
  return into;
}

export const count = (h: Histogram) => h.reduce((a, b) => a + b, 0);

/** The p-th percentile in milliseconds (bucket midpoint), or null when empty. */
export function percentileMs(h: Histogram, p: number): number | null {
  const total = count(h);
  if (total === 0) return null;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (let i = 0; i < BUCKETS; i++) {
    seen += h[i];
    if (seen >= rank) return i === 0 ? 0 : Math.round(Math.exp((i - 0.5) * GROWTH)) / 1000;
  }
  return null;
}
