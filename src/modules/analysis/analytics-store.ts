// SQL of GET /api/analytics/calls: one account's call rows counted by a
// key, from the columns on the rows themselves (no record is decrypted).
// Counting is grouping by the call's `tally` (tally.ts), and latency
// percentiles, which cannot be summed, come from the calls' latencies in
// 10 ms bins: the service merges groups and bins. All three come from one
// read of the covering index of migration 540 (not the rows) and no sort:
// on SQLite an aggregate function folds the range (analytics-fold.ts), on
// PostgreSQL one hash aggregate by key and tally carries each group's
// latency bins as two arrays, read here into histograms.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DatabaseHandle, Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { ANALYTICS_FOLD, addIntegers, analyticsFold, type FoldResult, Histogram } from './analytics-fold.js';
import type { AnalyticsReaders } from './analytics-readers.js';

export type GroupBy = 'day' | 'agent' | 'campaign' | 'outcome' | 'direction';

export interface AnalyticsFilter {
  userId: string;
  from: number;
  to: number;
  agentId?: string;
  campaignId?: string;
  /** groupBy day: where the caller's zone's offset is constant (time-zone.ts offsetPieces). */
  offsets: ReadonlyArray<{ until: number; offset: number }>;
}

/** Calls of one key and tally (tally.ts: what they count as), with their seconds and cost. */
export interface CountRow {
  key: string | number | null;
  /** null: not tallied yet (under way, or its analysis has not run). */
  tally: number | null;
  calls: number;
  durationSeconds: number;
  costCents: number;
}

export const LATENCY_BIN_MS = 10;
const int = (n: number) => sql.raw(String(Math.trunc(n)));

function keyExpression(groupBy: GroupBy, offsets: AnalyticsFilter['offsets']): RawBuilder<unknown> {
  switch (groupBy) {
    case 'day': {
      // Offsets are integers this server computed, inlined so both dialects do integer arithmetic on bigint.
      const [last, ...earlier] = [...offsets].reverse();
      const offset = earlier.length
        ? sql`case ${sql.join(
            [...earlier].reverse().map((p) => sql`when created_at < ${int(p.until)} then ${int(p.offset)}`),
            sql` `,
          )} else ${int(last!.offset)} end`
        : int(last!.offset);
      return sql`(created_at + ${offset}) / 86400000`;
    }
    case 'agent':
      return sql`agent_id`;
    case 'campaign':
      return sql`campaign_id`;
    case 'outcome':
      return sql`coalesce(outcome, status)`;
    case 'direction':
      return sql`coalesce(direction, 'outbound')`;
  }
}

/** A key's calls by latency bin (calls with that latency only): `calls[i]` in `bins[i]`, each bin once. */
export interface BinRow {
  key: string | number | null;
  bins: number[];
  calls: number[];
}

export interface Groups {
  counts: CountRow[];
  /** At most one row per key. */
  p50: BinRow[];
  p95: BinRow[];
}

const keyOf = (groupBy: GroupBy, k: unknown) =>
  k === null || k === undefined ? null : groupBy === 'day' ? Number(k) : String(k);

/** A group of calls of one key and tally from PostgreSQL: numbers as the driver gives them, bins as array text. */
interface PostgresGroup {
  k: unknown;
  tally: unknown;
  calls: unknown;
  duration: unknown;
  cost: unknown;
  p50: string | null;
  p95: string | null;
}

export class AnalyticsStore {
  /** On SQLite, defines the fold on the connection (`defineAggregate`: the database handle's). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    defineAggregate: DatabaseHandle['defineSqliteAggregate'],
    /** SQLite: worker threads that fold off the event loop (analytics-readers.ts); null folds on the connection. */
    private readonly readers: Pick<AnalyticsReaders, 'fold'> | null = null,
  ) {
    if (dialect === 'sqlite') defineAggregate(ANALYTICS_FOLD, analyticsFold);
  }

  private where(f: AnalyticsFilter) {
    return sql`user_id = ${f.userId} and created_at >= ${f.from} and created_at < ${f.to}${
      f.agentId !== undefined ? sql` and agent_id = ${f.agentId}` : sql``
    }${f.campaignId !== undefined ? sql` and campaign_id = ${f.campaignId}` : sql``}`;
  }

  /** Calls by key and tally, and by key and each latency percentile's bin, in one read of the range. */
  async groups(groupBy: GroupBy, f: AnalyticsFilter): Promise<Groups> {
    return this.dialect === 'sqlite' ? this.foldSqlite(groupBy, f) : this.groupPostgres(groupBy, f);
  }

  private async foldSqlite(groupBy: GroupBy, f: AnalyticsFilter): Promise<Groups> {
    // In the readers, a range longer than a day as two halves at once (one core each), as on PostgreSQL below.
    const parts = this.readers ? halves(f) : [f];
    const folded = await Promise.all(
      parts.map(async (part) => {
        const query = this.foldQuery(groupBy, part);
        let text: string;
        if (this.readers) {
          const compiled = query.compile(this.db);
          text = await this.readers.fold(compiled.sql, compiled.parameters);
        } else text = (await query.execute(this.db)).rows[0]!.folded;
        return JSON.parse(text) as FoldResult;
      }),
    );
    const groups: Groups = { counts: [], p50: [], p95: [] };
    for (const part of folded)
      for (const [k, tally, calls, durationSeconds, costCents] of part.counts)
        groups.counts.push({ key: keyOf(groupBy, k), tally, calls, durationSeconds, costCents });
    if (folded.length === 1) {
      groups.p50 = folded[0]!.p50.map(([k, bins, calls]) => ({ key: keyOf(groupBy, k), bins, calls }));
      groups.p95 = folded[0]!.p95.map(([k, bins, calls]) => ({ key: keyOf(groupBy, k), bins, calls }));
      return groups;
    }
    // A key's bins from both halves into one histogram per key and percentile (at most one row per key).
    const histograms: KeyHistograms = new Map();
    for (const part of folded)
      for (const percentile of ['p50', 'p95'] as const)
        for (const [k, bins, calls] of part[percentile]) {
          const h = histogramsOf(histograms, keyOf(groupBy, k))[percentile];
          for (let i = 0; i < bins.length; i++) h.add(bins[i]!, calls[i]);
        }
    pushHistograms(histograms, groups);
    return groups;
  }

  private foldQuery(groupBy: GroupBy, f: AnalyticsFilter) {
    const bin = int(LATENCY_BIN_MS);
    return sql<{ folded: string }>`
      select ${sql.raw(ANALYTICS_FOLD)}(${keyExpression(groupBy, f.offsets)}, tally, duration_seconds, cost_cents,
             latency_p50_ms / ${bin}, latency_p95_ms / ${bin}) as folded
        from call_sessions
       where ${this.where(f)}`;
  }

  /**
   * One scan, one hash aggregate of a few groups: the calls by key and tally, each group with the latency bins of its
   * calls as two arrays (a day key by tally is ~7 groups, by 10 ms bin ~200: hashing 100,000 rows into the bins'
   * 20,000 groups as well took as long again as the scan). The arrays come as text, read here into one histogram per
   * key and percentile (the fold's, analytics-fold.ts): the same groups as grouping by bin, in a few ms.
   */
  private async groupPostgres(groupBy: GroupBy, f: AnalyticsFilter): Promise<Groups> {
    // Two halves of a range at once, each on its own connection: PostgreSQL 15 runs no array_agg in parallel (16
    // does, in its own workers), and one backend takes ~50 ms of CPU for 100,000 calls. Every call is in exactly one
    // half (created_at before mid or not); both halves' groups go into the same counts and histograms below.
    const rows = (await Promise.all(halves(f).map((part) => this.readPostgres(groupBy, part)))).flat();
    const groups: Groups = { counts: [], p50: [], p95: [] };
    const histograms: KeyHistograms = new Map();
    for (const r of rows) {
      const key = keyOf(groupBy, r.k);
      groups.counts.push({
        key,
        tally: r.tally === null ? null : Number(r.tally),
        calls: Number(r.calls),
        durationSeconds: Number(r.duration ?? 0),
        costCents: Number(r.cost ?? 0),
      });
      if (r.p50 === null && r.p95 === null) continue;
      const h = histogramsOf(histograms, key);
      if (r.p50 !== null) addIntegers(r.p50, h.p50);
      if (r.p95 !== null) addIntegers(r.p95, h.p95);
    }
    pushHistograms(histograms, groups);
    return groups;
  }

  private async readPostgres(groupBy: GroupBy, f: AnalyticsFilter) {
    const bin = int(LATENCY_BIN_MS);
    // At the default random_page_cost (4, a spinning disk's) the planner prices the covering index's pages (half as
    // many as the table's) above reading the whole table in order, and reads every row of it and sorts them (its guess
    // of a computed key's groups is ~100,000: 630 in fact). The index of an account's calls is in memory or on an
    // SSD, where 1.1 is the usual figure. work_mem: the groups' arrays (a few MB at 100,000 calls) in memory.
    const { rows } = await this.db.transaction().execute(async (tx) => {
      // Both for this transaction only (set_config's `true`), in one statement.
      await sql`select set_config('work_mem', ${WORK_MEM}, true), set_config('random_page_cost', ${INDEX_PAGE_COST}, true)`.execute(
        tx,
      );
      return sql<PostgresGroup>`
      select k, tally, count(*) as calls, sum(duration_seconds) as duration, sum(cost_cents) as cost,
             array_agg(p50) filter (where p50 is not null)::text as p50,
             array_agg(p95) filter (where p95 is not null)::text as p95
        from (select ${keyExpression(groupBy, f.offsets)} as k, tally, duration_seconds, cost_cents,
                     latency_p50_ms / ${bin} as p50, latency_p95_ms / ${bin} as p95
                from call_sessions
               where ${this.where(f)}) as c
       group by k, tally`.execute(tx);
    });
    return rows;
  }
}

/** The groups and their arrays (a few MB at 100,000 calls) in memory: past work_mem, new groups' rows go to disk. */
const WORK_MEM = '64MB';
/** A range longer than this is read as two halves at once (a day's calls are quick to read in one). */
const SPLIT_PAST_MS = 86_400_000;

/** Per key, one histogram per latency percentile: where parts of a range (halves, PostgreSQL's groups) meet. */
type KeyHistograms = Map<string | number | null, { p50: Histogram; p95: Histogram }>;

function histogramsOf(histograms: KeyHistograms, key: string | number | null) {
  let h = histograms.get(key);
  if (!h) histograms.set(key, (h = { p50: new Histogram(), p95: new Histogram() }));
  return h;
}

/** Each key's histograms into the groups' rows (a key without calls of a percentile gives no row of it). */
function pushHistograms(histograms: KeyHistograms, groups: Groups): void {
  for (const [key, h] of histograms) {
    const p50 = h.p50.arrays();
    if (p50) groups.p50.push({ key, bins: p50[0], calls: p50[1] });
    const p95 = h.p95.arrays();
    if (p95) groups.p95.push({ key, bins: p95[0], calls: p95[1] });
  }
}

/** The range as two halves when it is longer than SPLIT_PAST_MS: every call is in exactly one (created_at before mid or not). */
function halves(f: AnalyticsFilter): AnalyticsFilter[] {
  if (f.to - f.from <= SPLIT_PAST_MS) return [f];
  const mid = f.from + Math.floor((f.to - f.from) / 2);
  return [
    { ...f, to: mid },
    { ...f, from: mid },
  ];
}
const INDEX_PAGE_COST = '1.1';
