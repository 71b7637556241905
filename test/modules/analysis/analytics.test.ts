// GET /api/analytics/calls on a real database: buckets exact on a known set
// of call rows, in the caller's time zone across midnight and across the end
// of daylight saving time, every grouping and filter, another user's calls
// never counted, and a call analysed through the real path counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { tallyOf } from '../../../src/modules/analysis/tally.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { callConfig } from '../calls/support.js';
import { analysedCall, endedCall } from './support.js';

let t: TestApp;
let user: TestUser;
let other: TestUser;

interface Row {
  at: string;
  status?: string;
  outcome?: string | null;
  success?: number | null;
  costCents?: number | null;
  p50?: number | null;
  p95?: number | null;
  duration?: number;
  answered?: boolean;
  agent?: string;
  campaign?: string | null;
  direction?: string;
}

async function insertCall(owner: TestUser, r: Row): Promise<void> {
  const at = Date.parse(r.at);
  await t.database.db
    .insertInto('call_sessions')
    .values({
      id: newId(at),
      user_id: owner.id,
      direction: r.direction ?? 'outbound',
      status: r.status ?? 'completed',
      webhook_url: null,
      summary: JSON.stringify({ agent: { name: r.agent ?? 'Amy' } }),
      provider_call_id: null,
      duration_seconds: r.duration ?? 0,
      finished_at: at + 1000,
      record_object_id: null,
      outcome: r.outcome === undefined ? 'completed' : r.outcome,
      answered_at: r.answered === false ? null : at + 500,
      agent_id: r.agent ?? 'Amy',
      campaign_id: r.campaign ?? null,
      success: r.success ?? null,
      cost_cents: r.costCents ?? null,
      latency_p50_ms: r.p50 ?? null,
      latency_p95_ms: r.p95 ?? null,
      analysis_status: 'completed',
      tally: tallyOf({
        status: r.status ?? 'completed',
        outcome: r.outcome === undefined ? 'completed' : r.outcome,
        answeredAt: r.answered === false ? null : at + 500,
        ended: true,
        success: r.success === undefined || r.success === null ? null : r.success === 1,
      }),
      created_at: at,
      updated_at: at + 1000,
    })
    .execute();
}

beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  await t.app.ready();
  t.services.platform.jobs.start();
  user = await createVerifiedUser(t);
  other = await createVerifiedUser(t);
  // Berlin is UTC+1 in November: c1 is the 28th there (the 27th in UTC), c3 the 29th (the 28th in UTC).
  await insertCall(user, { at: '2026-11-27T23:30:00Z', success: 1, costCents: 10, p50: 600, p95: 900, duration: 60 });
  await insertCall(user, {
    at: '2026-11-28T22:59:00Z',
    outcome: 'voicemail',
    success: 0,
    costCents: 5,
    p50: 800,
    p95: 1200,
    duration: 20,
  });
  await insertCall(user, {
    at: '2026-11-28T23:00:00Z',
    status: 'failed',
    outcome: 'provider_error',
    answered: false,
    duration: 0,
  });
  await insertCall(user, {
    at: '2026-11-29T12:00:00Z',
    outcome: 'transferred',
    success: 1,
    costCents: 25,
    p50: 500,
    p95: 700,
    duration: 120,
    agent: 'agent-b',
    campaign: 'camp-1',
    direction: 'inbound',
  });
  // Before the range in Berlin (23:59 on the 27th).
  await insertCall(user, { at: '2026-11-27T22:59:00Z', costCents: 1000 });
  // Another account's call in the range: never counted.
  await insertCall(other, { at: '2026-11-28T12:00:00Z', costCents: 999, success: 1, p50: 10, p95: 10 });
  // Across the end of summer time in Berlin (2026-10-25 01:00 UTC: +2 before, +1 after).
  await insertCall(user, { at: '2026-10-24T22:30:00Z' });
  await insertCall(user, { at: '2026-10-25T22:30:00Z' });
  await insertCall(user, { at: '2026-10-25T23:30:00Z' });
});
afterAll(async () => {
  await t.close();
});

const analytics = async (owner: TestUser, query: string) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/analytics/calls?${query}`, headers: bearer(owner.token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

const zero = {
  calls: 0,
  answered: 0,
  completed: 0,
  voicemail: 0,
  transferred: 0,
  failed: 0,
  successRate: null,
  avgDurationSeconds: null,
  costUsd: 0,
  latencyP50Ms: null,
  latencyP95Ms: null,
};

describe('GET /api/analytics/calls', () => {
  it("counts by day in the caller's time zone, exactly", async () => {
    const answer = await analytics(user, 'from=2026-11-28&to=2026-11-29&tz=Europe/Berlin');
    expect(answer.from).toBe('2026-11-27T23:00:00.000Z');
    expect(answer.to).toBe('2026-11-29T23:00:00.000Z');
    expect(answer.buckets).toEqual([
      {
        key: '2026-11-28',
        calls: 2,
        answered: 2,
        completed: 1,
        voicemail: 1,
        transferred: 0,
        failed: 0,
        successRate: 0.5,
        avgDurationSeconds: 40,
        costUsd: 0.15,
        latencyP50Ms: 600,
        latencyP95Ms: 1200,
      },
      {
        key: '2026-11-29',
        calls: 2,
        answered: 1,
        completed: 0,
        voicemail: 0,
        transferred: 1,
        failed: 1,
        successRate: 1,
        avgDurationSeconds: 60,
        costUsd: 0.25,
        latencyP50Ms: 500,
        latencyP95Ms: 700,
      },
    ]);
    expect(answer.totals).toEqual({
      calls: 4,
      answered: 3,
      completed: 1,
      voicemail: 1,
      transferred: 1,
      failed: 1,
      successRate: 0.6667,
      avgDurationSeconds: 50,
      costUsd: 0.4,
      latencyP50Ms: 600,
      latencyP95Ms: 1200,
    });
  });

  it('puts the same calls on other days in UTC, and lists days without calls', async () => {
    const answer = await analytics(user, 'from=2026-11-27&to=2026-11-30');
    expect(answer.buckets.map((b: { key: string; calls: number }) => [b.key, b.calls])).toEqual([
      ['2026-11-27', 2],
      ['2026-11-28', 2],
      ['2026-11-29', 1],
      ['2026-11-30', 0],
    ]);
    expect(answer.buckets[3]).toEqual({ key: '2026-11-30', ...zero });
  });

  it('cuts days at local midnight across the end of summer time', async () => {
    const answer = await analytics(user, 'from=2026-10-25&to=2026-10-26&tz=Europe/Berlin');
    expect(answer.from).toBe('2026-10-24T22:00:00.000Z');
    expect(answer.to).toBe('2026-10-26T23:00:00.000Z');
    expect(answer.buckets.map((b: { key: string; calls: number }) => [b.key, b.calls])).toEqual([
      ['2026-10-25', 2],
      ['2026-10-26', 1],
    ]);
  });

  it('groups by agent, campaign, outcome and direction, and filters by agent and campaign', async () => {
    const range = 'from=2026-11-28&to=2026-11-29&tz=Europe/Berlin';
    const keys = async (query: string) =>
      (await analytics(user, `${range}&${query}`)).buckets.map((b: { key: string | null; calls: number }) => [
        b.key,
        b.calls,
      ]);
    expect(await keys('groupBy=agent')).toEqual([
      ['Amy', 3],
      ['agent-b', 1],
    ]);
    expect(await keys('groupBy=campaign')).toEqual([
      [null, 3],
      ['camp-1', 1],
    ]);
    expect(await keys('groupBy=outcome')).toEqual([
      ['completed', 1],
      ['provider_error', 1],
      ['transferred', 1],
      ['voicemail', 1],
    ]);
    expect(await keys('groupBy=direction')).toEqual([
      ['outbound', 3],
      ['inbound', 1],
    ]);
    expect((await analytics(user, `${range}&campaignId=camp-1`)).totals).toMatchObject({ calls: 1, costUsd: 0.25 });
    expect((await analytics(user, `${range}&agentId=Amy&groupBy=outcome`)).totals).toMatchObject({
      calls: 3,
      failed: 1,
    });
  });

  it("never counts another account's calls", async () => {
    const answer = await analytics(other, 'from=2026-11-28&to=2026-11-29&tz=Europe/Berlin');
    expect(answer.totals).toMatchObject({ calls: 1, costUsd: 9.99, latencyP50Ms: 10 });
    const mine = await analytics(user, 'from=2026-11-28T00:00:00Z&to=2026-11-28T23:00:00Z');
    expect(mine.totals.calls).toBe(1);
  });

  it('answers a range without calls in every grouping (the one-pass read of no rows)', async () => {
    const range = 'from=2026-06-01&to=2026-06-02&tz=Europe/Berlin';
    expect((await analytics(user, range)).buckets).toEqual([
      { key: '2026-06-01', ...zero },
      { key: '2026-06-02', ...zero },
    ]);
    for (const groupBy of ['agent', 'campaign', 'outcome', 'direction']) {
      const answer = await analytics(user, `${range}&groupBy=${groupBy}`);
      expect(answer.buckets, groupBy).toEqual([]);
      expect(answer.totals, groupBy).toEqual(zero);
    }
  });

  it('refuses an unknown time zone, an empty range and one over 400 days', async () => {
    for (const query of [
      'tz=Mars/Olympus',
      'from=2026-11-29&to=2026-11-28',
      'from=2025-01-01&to=2026-11-28',
      'from=yesterday',
      'groupBy=week',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/analytics/calls?${query}`,
        headers: bearer(user.token),
      });
      expect(res.statusCode, query).toBe(400);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/analytics/calls' })).statusCode).toBe(401);
  });

  it('counts a call analysed through the real path on the day it started', async () => {
    const fresh = await createVerifiedUser(t);
    const sessionId = await endedCall(t, fresh, {
      transcript: [
        { role: 'agent', text: 'Hello.' },
        { role: 'caller', text: 'What time do you open?' },
        { role: 'agent', text: 'We open at nine.' },
      ],
    });
    await analysedCall(t, fresh, sessionId);
    const day = new Date(t.clock.now()).toISOString().slice(0, 10);
    const answer = await analytics(fresh, `from=${day}&to=${day}`);
    expect(answer.buckets).toEqual([
      { key: day, ...zero, calls: 1, completed: 1, successRate: 1, avgDurationSeconds: 30 },
    ]);
  });
});
