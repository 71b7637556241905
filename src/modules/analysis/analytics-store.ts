// SQL of GET /api/analytics/calls: one account's call rows counted by a
// key, from the columns on the rows themselves (no record is decrypted).
// Counting is grouping by the call's `tally` (tally.ts), and latency
// percentiles, which cannot be summed, come from the calls' latencies in
// 10 ms bins: the service merges groups and bins. All three come from one
// read of the covering index of migration 510 (not the rows) and no sort:
// on SQLite an aggregate function folds the range (analytics-fold.ts), on
// PostgreSQL grouping sets hash the three groupings in one scan.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DatabaseHandle, Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { ANALYTICS_FOLD, analyticsFold, type FoldResult } from './analytics-fold.js';

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

export class AnalyticsStore {
  /** On SQLite, defines the fold on the connection (`defineAggregate`: the database handle's). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    defineAggregate: DatabaseHandle['defineSqliteAggregate'],
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
    const bin = int(LATENCY_BIN_MS);
    const { rows } = await sql<{ folded: string }>`
      select ${sql.raw(ANALYTICS_FOLD)}(${keyExpression(groupBy, f.offsets)}, tally, duration_seconds, cost_cents,
             latency_p50_ms / ${bin}, latency_p95_ms / ${bin}) as folded
        from call_sessions
       where ${this.where(f)}`.execute(this.db);
    const folded = JSON.parse(rows[0]!.folded) as FoldResult;
    return {
      counts: folded.counts.map(([k, tally, calls, durationSeconds, costCents]) => ({
        key: keyOf(groupBy, k),
        tally,
        calls,
        durationSeconds,
        costCents,
      })),
      p50: folded.p50.map(([k, bins, calls]) => ({ key: keyOf(groupBy, k), bins, calls })),
      p95: folded.p95.map(([k, bins, calls]) => ({ key: keyOf(groupBy, k), bins, calls })),
    };
  }

  /**
   * One scan, three hash aggregates (grouping sets); grouping() says which set a row belongs to. The histograms'
   * groups (a day key has ~20,000: a key by 10 ms bins) come back as two arrays per key, a few hundred rows in all:
   * reading 20,000 rows into objects took this process longer than the query.
   */
  private async groupPostgres(groupBy: GroupBy, f: AnalyticsFilter): Promise<Groups> {
    const bin = int(LATENCY_BIN_MS);
    // The planner guesses a computed key's groups badly (~300,000 for 90 days of a day key, 20,000 in fact) and,
    // their hash tables then past the default work_mem, sorts 100,000 rows on disk instead: it may use more here.
    // And at the default random_page_cost (4, a spinning disk's) it prices the covering index's pages (half as many
    // as the table's) above reading the whole table in order, and reads every row of it: 125 ms instead of 76 ms
    // at 100,000 calls. The index of an account's calls is in memory or on an SSD, where 1.1 is the usual figure.
    const { rows } = await this.db.transaction().execute(async (tx) => {
      // Both for this transaction only (set_config's `true`), in one statement.
      await sql`select set_config('work_mem', ${WORK_MEM}, true), set_config('random_page_cost', ${INDEX_PAGE_COST}, true)`.execute(
        tx,
      );
      return sql<Record<string, unknown>>`
      with g as materialized (
        select k, tally, p50, p95, grouping(tally, p50, p95) as set, count(*) as calls,
               sum(duration_seconds) as duration, sum(cost_cents) as cost
          from (select ${keyExpression(groupBy, f.offsets)} as k, tally, duration_seconds, cost_cents,
                       latency_p50_ms / ${bin} as p50, latency_p95_ms / ${bin} as p95
                  from call_sessions
                 where ${this.where(f)}) as c
         group by grouping sets ((k, tally), (k, p50), (k, p95)))
      select k, set, tally, calls, duration, cost, null::int4[] as bins, null::int4[] as bin_calls
        from g where set = ${int(GROUPED_BY_TALLY)}
      union all
      select k, set, null, null, null, null, array_agg(coalesce(p50, p95)::int4), array_agg(calls::int4)
        from g where set <> ${int(GROUPED_BY_TALLY)} and coalesce(p50, p95) is not null
       group by k, set`.execute(tx);
    });
    const groups: Groups = { counts: [], p50: [], p95: [] };
    for (const r of rows) {
      const key = keyOf(groupBy, r.k);
      const set = Number(r.set);
      if (set === GROUPED_BY_TALLY) {
        groups.counts.push({
          key,
          tally: r.tally === null ? null : Number(r.tally),
          calls: Number(r.calls),
          durationSeconds: Number(r.duration ?? 0),
          costCents: Number(r.cost ?? 0),
        });
        continue;
      }
      const into = set === GROUPED_BY_P50 ? groups.p50 : set === GROUPED_BY_P95 ? groups.p95 : null;
      into?.push({ key, bins: r.bins as number[], calls: r.bin_calls as number[] });
    }
    return groups;
  }
}

/** Enough for the three hash tables of 400 days' keys by 10 ms bins (a few MB in fact). */
const WORK_MEM = '64MB';
const INDEX_PAGE_COST = '1.1';
// grouping(tally, p50, p95): a bit set for each of the three a row's set leaves out.
const GROUPED_BY_TALLY = 0b011;
const GROUPED_BY_P50 = 0b101;
const GROUPED_BY_P95 = 0b110;
