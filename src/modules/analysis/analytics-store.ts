// SQL of GET /api/analytics/calls: one account's call rows counted by a
// key, from the columns on the rows themselves (no record is decrypted).
// Counting is grouping by the call's `tally` (tally.ts), and latency
// percentiles, which cannot be summed, come from the calls' latencies in
// 10 ms bins, one query per percentile: the service merges groups and bins.
// The three queries read the covering index of migration 510, not the rows.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.js';

export type GroupBy = 'day' | 'agent' | 'campaign' | 'outcome' | 'direction';

export interface AnalyticsFilter {
  userId: string;
  from: number;
  to: number;
  agentId?: string;
  campaignId?: string;
  /** groupBy day: where the caller's zone's offset is constant (time-zone.ts offsetPieces). */
  offsets: Array<{ until: number; offset: number }>;
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

export class AnalyticsStore {
  constructor(private readonly db: Kysely<Database>) {}

  private where(f: AnalyticsFilter) {
    return sql`user_id = ${f.userId} and created_at >= ${f.from} and created_at < ${f.to}${
      f.agentId !== undefined ? sql` and agent_id = ${f.agentId}` : sql``
    }${f.campaignId !== undefined ? sql` and campaign_id = ${f.campaignId}` : sql``}`;
  }

  /** Calls by key and tally: a handful of groups per key, so the database sorts little. */
  async counts(groupBy: GroupBy, f: AnalyticsFilter): Promise<CountRow[]> {
    const { rows } = await sql<Record<string, unknown>>`
      select ${keyExpression(groupBy, f.offsets)} as k, tally, count(*) as calls,
             sum(duration_seconds) as duration, sum(cost_cents) as cost
        from call_sessions
       where ${this.where(f)}
       group by 1, 2`.execute(this.db);
    return rows.map((r) => ({
      key: r.k === null ? null : groupBy === 'day' ? Number(r.k) : String(r.k),
      tally: r.tally === null ? null : Number(r.tally),
      calls: Number(r.calls),
      durationSeconds: Number(r.duration ?? 0),
      costCents: Number(r.cost ?? 0),
    }));
  }

  /** Calls by key and median-latency bin (calls with a latency only). */
  async p50Bins(
    groupBy: GroupBy,
    f: AnalyticsFilter,
  ): Promise<Array<{ key: string | number | null; bin: number; calls: number }>> {
    return this.bins(groupBy, f, 'latency_p50_ms');
  }

  /** Calls by key and 95th-percentile-latency bin (calls with a latency only). */
  async p95Bins(
    groupBy: GroupBy,
    f: AnalyticsFilter,
  ): Promise<Array<{ key: string | number | null; bin: number; calls: number }>> {
    return this.bins(groupBy, f, 'latency_p95_ms');
  }

  private async bins(groupBy: GroupBy, f: AnalyticsFilter, column: 'latency_p50_ms' | 'latency_p95_ms') {
    const { rows } = await sql<Record<string, unknown>>`
      select ${keyExpression(groupBy, f.offsets)} as k, ${sql.ref(column)} / ${int(LATENCY_BIN_MS)} as bin, count(*) as calls
        from call_sessions
       where ${this.where(f)} and ${sql.ref(column)} is not null
       group by 1, 2`.execute(this.db);
    return rows.map((r) => ({
      key: r.k === null ? null : groupBy === 'day' ? Number(r.k) : String(r.k),
      bin: Number(r.bin),
      calls: Number(r.calls),
    }));
  }
}
