// GET /api/analytics/calls against a plain reference on 1,505 generated call
// rows (every status, calls not tallied yet, missing figures, a latency past
// the fold's arrays): for every grouping and filter, in UTC, Berlin across
// the end of summer time, Beirut (its clocks go back at midnight) and
// Kathmandu (+05:45), over whole days and between
// two instants, the answer is what counting call by call gives. The
// reference knows nothing of the server's grouping, offsets or histograms:
// it puts each call on its local date with Intl and sorts its latencies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { TALLY, tallyOf } from '../../../src/modules/analysis/tally.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { callConfig } from '../calls/support.js';

let t: TestApp;
let user: TestUser;
let other: TestUser;

interface CallRow {
  created_at: number;
  status: string;
  outcome: string | null;
  direction: string;
  agent_id: string | null;
  campaign_id: string | null;
  duration_seconds: number | null;
  cost_cents: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  tally: number | null;
}

/** A deterministic sequence (mulberry32): the same rows on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

const START = Date.parse('2026-10-20T00:00:00Z');
const SPAN_MS = 16 * 86_400_000;

function generate(count: number, seed: number): CallRow[] {
  const next = random(seed);
  const pick = <T>(values: T[]) => values[Math.floor(next() * values.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const status = pick(['completed', 'completed', 'completed', 'no_answer', 'failed', 'in_progress']);
    const outcome =
      status === 'in_progress'
        ? null
        : status === 'completed'
          ? pick(['completed', 'voicemail', 'transferred', null])
          : status === 'failed'
            ? pick(['provider_error', null])
            : 'no_answer';
    const talked = status === 'completed' && outcome !== 'voicemail';
    const ended = status !== 'in_progress';
    const success = talked ? pick([true, false, null]) : null;
    const latency = () => (talked && next() < 0.9 ? Math.floor(next() * 3000) : null);
    return {
      created_at: START + Math.floor(next() * SPAN_MS),
      status,
      outcome,
      direction: pick(['inbound', 'outbound', 'web']),
      agent_id: pick(['agent-a', 'agent-b', 'agent-c', null]),
      campaign_id: pick(['camp-1', 'camp-2', null, null]),
      duration_seconds: ended ? (next() < 0.05 ? null : Math.floor(next() * 600)) : null,
      cost_cents: next() < 0.1 ? null : Math.floor(next() * 50),
      // One call far past the binned range of the fold (over 41 s): counted all the same.
      latency_p50_ms: i === 7 ? 900_000 : latency(),
      latency_p95_ms: i === 7 ? 1_200_005 : latency(),
      // Some not tallied yet (their analysis has not run).
      tally:
        next() < 0.05
          ? null
          : tallyOf({
              status,
              outcome,
              answeredAt: status === 'completed' ? 1 : null,
              ended,
              success,
            }),
    };
  });
}

let rows: CallRow[];

beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  await t.app.ready();
  user = await createVerifiedUser(t);
  other = await createVerifiedUser(t);
  // And calls in the first minute after Beirut's clocks go back at midnight (2026-10-24 21:00 UTC, 00:00 of the
  // 25th becoming 23:00 of the 24th): on the 24th there, however few seconds after the change.
  rows = [
    ...generate(1500, 40),
    ...['20:59:59.500', '21:00:00.000', '21:00:00.700', '21:00:30.000', '21:00:59.999'].map((time, i) => ({
      ...generate(1, 50 + i)[0]!,
      created_at: Date.parse(`2026-10-24T${time}Z`),
    })),
  ];
  for (const [owner, list] of [
    [user, rows],
    [other, generate(300, 41)],
  ] as const) {
    const values = list.map((r, i) => ({
      ...r,
      id: `${newId(r.created_at)}${owner === user ? 'u' : 'o'}${i}`,
      user_id: owner.id,
      webhook_url: null,
      summary: '{}',
      provider_call_id: null,
      finished_at: null,
      record_object_id: null,
      answered_at: r.status === 'completed' ? r.created_at + 1000 : null,
      success: null,
      analysis_status: r.tally === null ? null : 'completed',
      updated_at: r.created_at,
    }));
    for (let i = 0; i < values.length; i += 200)
      await t.database.db
        .insertInto('call_sessions')
        .values(values.slice(i, i + 200))
        .execute();
  }
});
afterAll(async () => {
  await t.close();
});

type GroupBy = 'day' | 'agent' | 'campaign' | 'outcome' | 'direction';

const formats = new Map<string, Intl.DateTimeFormat>();
function localDate(tz: string, ms: number): string {
  let format = formats.get(tz);
  if (!format)
    formats.set(
      tz,
      (format = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' })),
    );
  return format.format(ms);
}

function nearestRank(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1]!;
}

function bucket(calls: CallRow[]) {
  const has = (bit: number) => calls.filter((c) => c.tally !== null && (c.tally & bit) !== 0);
  const ended = has(TALLY.ended);
  const judged = has(TALLY.judged).length;
  const bin = (ms: number) => Math.floor(ms / 10) * 10;
  return {
    calls: calls.length,
    answered: has(TALLY.answered).length,
    completed: has(TALLY.completed).length,
    voicemail: has(TALLY.voicemail).length,
    transferred: has(TALLY.transferred).length,
    failed: has(TALLY.failed).length,
    successRate: judged ? Math.round((has(TALLY.success).length / judged) * 10_000) / 10_000 : null,
    avgDurationSeconds: ended.length
      ? Math.round((ended.reduce((s, c) => s + (c.duration_seconds ?? 0), 0) / ended.length) * 10) / 10
      : null,
    costUsd: calls.reduce((s, c) => s + (c.cost_cents ?? 0), 0) / 100,
    latencyP50Ms: nearestRank(
      calls.filter((c) => c.latency_p50_ms !== null).map((c) => bin(c.latency_p50_ms!)),
      50,
    ),
    latencyP95Ms: nearestRank(
      calls.filter((c) => c.latency_p95_ms !== null).map((c) => bin(c.latency_p95_ms!)),
      95,
    ),
  };
}

interface Query {
  groupBy: GroupBy;
  tz: string;
  /** Whole local days (both included), or instants. */
  range: { days: [string, string] } | { instants: [string, string] };
  agentId?: string;
  campaignId?: string;
}

function reference(q: Query) {
  const inRange = (c: CallRow) =>
    'days' in q.range
      ? localDate(q.tz, c.created_at) >= q.range.days[0] && localDate(q.tz, c.created_at) <= q.range.days[1]
      : c.created_at >= Date.parse(q.range.instants[0]) && c.created_at < Date.parse(q.range.instants[1]);
  const calls = rows.filter(
    (c) =>
      inRange(c) &&
      (q.agentId === undefined || c.agent_id === q.agentId) &&
      (q.campaignId === undefined || c.campaign_id === q.campaignId),
  );
  const keyOf = (c: CallRow): string | null => {
    switch (q.groupBy) {
      case 'day':
        return localDate(q.tz, c.created_at);
      case 'agent':
        return c.agent_id;
      case 'campaign':
        return c.campaign_id;
      case 'outcome':
        return c.outcome ?? c.status;
      case 'direction':
        return c.direction;
    }
  };
  const groups = new Map<string | null, CallRow[]>();
  if (q.groupBy === 'day') {
    const [first, last] =
      'days' in q.range
        ? q.range.days
        : [localDate(q.tz, Date.parse(q.range.instants[0])), localDate(q.tz, Date.parse(q.range.instants[1]) - 1)];
    for (let d = first; d <= last; d = localDate('UTC', Date.parse(`${d}T12:00:00Z`) + 86_400_000)) groups.set(d, []);
  }
  for (const c of calls) {
    const key = keyOf(c);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(c);
  }
  const keys = [...groups.keys()].sort((a, b) =>
    q.groupBy === 'day'
      ? String(a).localeCompare(String(b))
      : groups.get(b)!.length - groups.get(a)!.length || String(a).localeCompare(String(b)),
  );
  return {
    buckets: keys.map((key) => ({ key, ...bucket(groups.get(key)!) })),
    totals: bucket(calls),
  };
}

async function answer(q: Query) {
  const params = new URLSearchParams({ groupBy: q.groupBy, tz: q.tz });
  const [from, to] = 'days' in q.range ? q.range.days : q.range.instants;
  params.set('from', from);
  params.set('to', to);
  if (q.agentId !== undefined) params.set('agentId', q.agentId);
  if (q.campaignId !== undefined) params.set('campaignId', q.campaignId);
  const res = await t.app.inject({ method: 'GET', url: `/api/analytics/calls?${params}`, headers: bearer(user.token) });
  expect(res.statusCode, res.body).toBe(200);
  const { buckets, totals } = res.json();
  return { buckets, totals };
}

const GROUPINGS: GroupBy[] = ['day', 'agent', 'campaign', 'outcome', 'direction'];
const RANGES: Query['range'][] = [
  { days: ['2026-10-21', '2026-11-03'] },
  { instants: ['2026-10-23T13:17:05Z', '2026-10-30T02:44:00Z'] },
];

describe('GET /api/analytics/calls against counting call by call', () => {
  for (const tz of ['UTC', 'Europe/Berlin', 'Asia/Beirut', 'Asia/Kathmandu'])
    it(`answers every grouping exactly in ${tz}`, async () => {
      for (const groupBy of GROUPINGS)
        for (const range of RANGES) {
          const q = { groupBy, tz, range };
          expect(await answer(q), JSON.stringify(q)).toEqual(reference(q));
        }
    });

  it('answers exactly with an agent filter, a campaign filter and both', async () => {
    for (const groupBy of GROUPINGS)
      for (const filter of [
        { agentId: 'agent-b' },
        { campaignId: 'camp-2' },
        { agentId: 'agent-a', campaignId: 'camp-1' },
      ]) {
        const q = { groupBy, tz: 'Europe/Berlin', range: RANGES[0]!, ...filter };
        expect(await answer(q), JSON.stringify(q)).toEqual(reference(q));
      }
  });

  it('counts the generated variety (the reference is not comparing empty answers)', () => {
    const all = reference({ groupBy: 'outcome', tz: 'UTC', range: { days: ['2026-10-01', '2026-11-30'] } });
    expect(all.totals.calls).toBe(1505);
    expect(all.buckets.map((b) => b.key).sort()).toEqual(
      ['completed', 'in_progress', 'no_answer', 'provider_error', 'failed', 'transferred', 'voicemail'].sort(),
    );
    expect(all.totals.latencyP95Ms).not.toBeNull();
  });
});
