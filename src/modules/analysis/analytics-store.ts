// SQL of GET /api/analytics/calls: one account's call rows counted by a
// key, from the columns on the rows themselves (no record is decrypted).
// Latency percentiles cannot be summed, so each query also groups by the
// call's latency in 10 ms bins: the service merges bins into percentiles.
// Two queries: one with the counts and the median latency's bins, one with
// the 95th percentile's bins.
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

/** Sums of one key and latency bin. */
export interface CountRow {
  key: string | number | null;
  bin: number | null;
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

  /** Counts by key and median-latency bin. */
  async counts(groupBy: GroupBy, f: AnalyticsFilter): Promise<CountRow[]> {
    const { rows } = await sql<Record<string, unknown>>`
      select ${keyExpression(groupBy, f.offsets)} as k, latency_p50_ms / ${int(LATENCY_BIN_MS)} as bin,
             count(*) as calls,
             sum(case when answered_at is not null then 1 else 0 end) as answered,
             sum(case when coalesce(outcome, status) = 'completed' then 1 else 0 end) as completed,
             sum(case when outcome = 'voicemail' then 1 else 0 end) as voicemail,
             sum(case when outcome = 'transferred' then 1 else 0 end) as transferred,
             sum(case when status = 'failed' then 1 else 0 end) as failed,
             sum(case when success = 1 then 1 else 0 end) as successes,
             sum(case when success is not null then 1 else 0 end) as judged,
             sum(case when finished_at is not null then 1 else 0 end) as ended,
             sum(case when finished_at is not null then coalesce(duration_seconds, 0) else 0 end) as duration,
             sum(coalesce(cost_cents, 0)) as cost
        from call_sessions
       where ${this.where(f)}
       group by 1, 2`.execute(this.db);
    return rows.map((r) => ({
      key: r.k === null ? null : groupBy === 'day' ? Number(r.k) : String(r.k),
      bin: r.bin === null ? null : Number(r.bin),
      calls: Number(r.calls),
      answered: Number(r.answered),
      completed: Number(r.completed),
      voicemail: Number(r.voicemail),
      transferred: Number(r.transferred),
      failed: Number(r.failed),
      successes: Number(r.successes),
      judged: Number(r.judged),
      ended: Number(r.ended),
      durationSeconds: Number(r.duration),
      costCents: Number(r.cost),
    }));
  }

  /** Calls by key and 95th-percentile-latency bin (calls with a latency only). */
  async p95Bins(
    groupBy: GroupBy,
    f: AnalyticsFilter,
  ): Promise<Array<{ key: string | number | null; bin: number; calls: number }>> {
    const { rows } = await sql<Record<string, unknown>>`
      select ${keyExpression(groupBy, f.offsets)} as k, latency_p95_ms / ${int(LATENCY_BIN_MS)} as bin, count(*) as calls
        from call_sessions
       where ${this.where(f)} and latency_p95_ms is not null
       group by 1, 2`.execute(this.db);
    return rows.map((r) => ({
      key: r.k === null ? null : groupBy === 'day' ? Number(r.k) : String(r.k),
      bin: Number(r.bin),
      calls: Number(r.calls),
    }));
  }
}
