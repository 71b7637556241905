// GET /api/analytics/calls (DESIGN.md "Post-call analysis and analytics"):
// an account's calls counted by day (in the caller's time zone), agent,
// campaign, outcome or direction, over a range of at most 400 days. Days
// with no calls are listed too (a chart needs them). Latency percentiles are
// over the calls' own figures: latencyP50Ms is the median of the calls'
// median answer latency, latencyP95Ms the 95th percentile of their 95th
// percentiles, both at 10 ms resolution (rounded down).
import { invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import {
  type AnalyticsFilter,
  type AnalyticsStore,
  type BinRow,
  type CountRow,
  type GroupBy,
  LATENCY_BIN_MS,
} from './analytics-store.js';
import { TALLY } from './tally.js';
import { checkTimeZone, DAY_MS, dayKey, localMidnight, offsetPieces } from './time-zone.js';

export interface AnalyticsQuery {
  from?: string;
  to?: string;
  groupBy?: GroupBy;
  tz?: string;
  agentId?: string;
  campaignId?: string;
}

export interface AnalyticsBucket {
  calls: number;
  answered: number;
  completed: number;
  voicemail: number;
  transferred: number;
  failed: number;
  /** Successful calls among those whose analysis decided (null: none decided). */
  successRate: number | null;
  avgDurationSeconds: number | null;
  costUsd: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

export interface AnalyticsAnswer {
  groupBy: GroupBy;
  tz: string;
  from: string;
  to: string;
  buckets: Array<AnalyticsBucket & { key: string | null }>;
  totals: AnalyticsBucket;
}

const MAX_RANGE_DAYS = 400;
const DEFAULT_RANGE_DAYS = 30;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

interface Sums {
  calls: number;
  answered: number;
  completed: number;
  voicemail: number;
  transferred: number;
  failed: number;
  successes: number;
  judged: number;
  ended: number;
  durationSeconds: number;
  costCents: number;
  /** The latency histograms of the bucket's keys (one each, the totals' one per key). */
  p50: Histogram[];
  p95: Histogram[];
}

type Histogram = Pick<BinRow, 'bins' | 'calls'>;

const emptySums = (): Sums => ({
  calls: 0,
  answered: 0,
  completed: 0,
  voicemail: 0,
  transferred: 0,
  failed: 0,
  successes: 0,
  judged: 0,
  ended: 0,
  durationSeconds: 0,
  costCents: 0,
  p50: [],
  p95: [],
});

/** Nearest-rank percentile of histograms of 10 ms bins together. */
function binPercentile(parts: Histogram[], p: number): number | null {
  let { bins, calls } = parts[0] ?? { bins: [], calls: [] };
  if (parts.length > 1) {
    const merged = new Map<number, number>();
    for (const h of parts)
      for (let i = 0; i < h.bins.length; i++) merged.set(h.bins[i]!, (merged.get(h.bins[i]!) ?? 0) + h.calls[i]!);
    bins = [...merged.keys()];
    calls = bins.map((bin) => merged.get(bin)!);
  }
  const total = calls.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const i of bins.map((_, i) => i).sort((a, b) => bins[a]! - bins[b]!)) {
    seen += calls[i]!;
    if (seen >= rank) return bins[i]! * LATENCY_BIN_MS;
  }
  return null;
}

function bucketOf(s: Sums): AnalyticsBucket {
  return {
    calls: s.calls,
    answered: s.answered,
    completed: s.completed,
    voicemail: s.voicemail,
    transferred: s.transferred,
    failed: s.failed,
    successRate: s.judged ? Math.round((s.successes / s.judged) * 10_000) / 10_000 : null,
    avgDurationSeconds: s.ended ? Math.round((s.durationSeconds / s.ended) * 10) / 10 : null,
    costUsd: s.costCents / 100,
    latencyP50Ms: binPercentile(s.p50, 50),
    latencyP95Ms: binPercentile(s.p95, 95),
  };
}

/** Adds a group of calls that count alike (one tally). */
function add(into: Sums, row: CountRow): void {
  const has = (bit: number) => (row.tally !== null && (row.tally & bit) !== 0 ? row.calls : 0);
  into.calls += row.calls;
  into.answered += has(TALLY.answered);
  into.completed += has(TALLY.completed);
  into.voicemail += has(TALLY.voicemail);
  into.transferred += has(TALLY.transferred);
  into.failed += has(TALLY.failed);
  into.successes += has(TALLY.success);
  into.judged += has(TALLY.judged);
  into.ended += has(TALLY.ended);
  // Seconds of ended calls only (a call under way has none yet); cost is what was charged.
  if (has(TALLY.ended)) into.durationSeconds += row.durationSeconds;
  into.costCents += row.costCents;
}

export class AnalyticsService {
  constructor(
    private readonly store: AnalyticsStore,
    private readonly clock: Clock,
  ) {}

  /** The range as UTC ms: dates are whole days in `tz` (both included), times are instants (`to` excluded). */
  private range(query: AnalyticsQuery, tz: string): { from: number; to: number } {
    const instant = (value: string, what: string, endOfDay: boolean) => {
      if (DATE.test(value)) {
        const start = localMidnight(tz, value);
        if (Number.isNaN(start)) throw invalidInput(`${what} is not a date`);
        if (!endOfDay) return start;
        const next = new Date(Date.parse(`${value}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
        return localMidnight(tz, next);
      }
      const ms = Date.parse(value);
      if (Number.isNaN(ms)) throw invalidInput(`${what} must be a date (YYYY-MM-DD) or an ISO 8601 time`);
      return ms;
    };
    const to = query.to !== undefined ? instant(query.to, 'to', true) : this.clock.now();
    const from = query.from !== undefined ? instant(query.from, 'from', false) : to - DEFAULT_RANGE_DAYS * DAY_MS;
    if (from >= to) throw invalidInput('from must be before to');
    if (to - from > MAX_RANGE_DAYS * DAY_MS + 2 * 3600_000)
      throw invalidInput(`the range is at most ${MAX_RANGE_DAYS} days`);
    return { from, to };
  }

  async calls(userId: string, query: AnalyticsQuery): Promise<AnalyticsAnswer> {
    const tz = query.tz ?? 'UTC';
    checkTimeZone(tz);
    const groupBy = query.groupBy ?? 'day';
    const { from, to } = this.range(query, tz);
    const filter: AnalyticsFilter = {
      userId,
      from,
      to,
      offsets: groupBy === 'day' ? offsetPieces(tz, from, to) : [],
      ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
      ...(query.campaignId !== undefined ? { campaignId: query.campaignId } : {}),
    };
    const { counts, p50, p95 } = await this.store.groups(groupBy, filter);
    const byKey = new Map<string | number | null, Sums>();
    const sums = (key: string | number | null) => {
      let s = byKey.get(key);
      if (!s) byKey.set(key, (s = emptySums()));
      return s;
    };
    if (groupBy === 'day') {
      // Every local day of the range, in order, with or without calls.
      const first = Math.floor((from + filter.offsets[0]!.offset) / DAY_MS);
      const last = Math.floor((to - 1 + filter.offsets.at(-1)!.offset) / DAY_MS);
      for (let day = first; day <= last; day++) sums(day);
    }
    const totals = emptySums();
    for (const row of counts) {
      add(sums(row.key), row);
      add(totals, row);
    }
    for (const row of p50) {
      sums(row.key).p50.push(row);
      totals.p50.push(row);
    }
    for (const row of p95) {
      sums(row.key).p95.push(row);
      totals.p95.push(row);
    }
    const keys = [...byKey.keys()].sort((a, b) =>
      groupBy === 'day'
        ? Number(a) - Number(b)
        : byKey.get(b)!.calls - byKey.get(a)!.calls || String(a).localeCompare(String(b)),
    );
    return {
      groupBy,
      tz,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      buckets: keys.map((key) => ({
        key: key === null ? null : groupBy === 'day' ? dayKey(Number(key)) : String(key),
        ...bucketOf(byKey.get(key)!),
      })),
      totals: bucketOf(totals),
    };
  }
}
