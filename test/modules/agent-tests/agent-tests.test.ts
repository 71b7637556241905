// Agent tests through the API on a real database (SQLite, or PostgreSQL with
// DATABASE_URL), in text mode against the sandbox dialogue engine: CRUD and
// ownership, runs as jobs, every expectation kind passing and failing for the
// right reason, a pathway agent, sandbox side effects, the concurrency limit,
// events and the JUnit report.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../../src/modules/platform/job-store.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser, type TestUser } from '../../support/factories.js';

let t: TestApp;
let ada: TestUser;
let eve: TestUser;
let calendar: string;

beforeAll(async () => {
  t = await createTestApp();
  ada = await createVerifiedUser(t);
  eve = await createVerifiedUser(t);
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/integrations',
    headers: bearer(ada.token),
    payload: {
      type: 'calendly',
      data: { accessToken: 'sandbox-token-0123456789', eventTypeUrl: 'https://calendly.com/acme/30min' },
    },
  });
  expect(res.statusCode).toBe(200);
  calendar = res.json().id;
});
afterAll(() => t?.close());

const amy = { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic. How can I help?' };
const bookingLines = ['Hello, who is this?', 'I would like to book a meeting next Tuesday', 'Goodbye'];

type Check = { name: string; passed: boolean; expected: unknown; actual: unknown };
type Result = {
  testId: string;
  status: string;
  checks: Check[];
  transcript: Array<{ role: string; text: string; latencyMs?: number; node?: string }>;
  toolCalls: Array<{ name: string; arguments: Record<string, unknown>; result: Record<string, unknown> }>;
  path?: string[];
  variables?: Record<string, unknown>;
  error?: string;
  durationMs: number | null;
};
type Run = { runId: string; status: string; summary: Record<string, number>; results: Result[] };

async function create(user: TestUser, body: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/agent-tests',
    headers: bearer(user.token),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

async function start(user: TestUser, testIds?: string[]) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/agent-tests/runs',
    headers: bearer(user.token),
    payload: testIds ? { testIds } : {},
  });
  expect(res.statusCode, res.body).toBe(202);
  return (res.json() as { runId: string }).runId;
}

async function waitFor(user: TestUser, runId: string): Promise<Run> {
  for (let i = 0; i < 1000; i++) {
    const res = await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(user.token) });
    const body = res.json() as Run;
    if (!['queued', 'running'].includes(body.status)) return body;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the run did not end');
}

const runOne = async (user: TestUser, body: Record<string, unknown>) => {
  const { id } = await create(user, body);
  const run = await waitFor(user, await start(user, [id]));
  return run.results[0]!;
};
const check = (r: Result, name: string) => r.checks.find((c) => c.name === name)!;

describe('agent tests: tests as data', () => {
  it('creates, reads, lists, replaces and deletes a test; another user gets 404 for all of it', async () => {
    const body = { name: 'greets', agent: amy, caller: { lines: ['hello'] }, expect: { says: ['Amy'] } };
    const { id } = await create(ada, body);
    const got = await t.app.inject({ url: `/api/agent-tests/${id}`, headers: bearer(ada.token) });
    expect(got.json()).toMatchObject({ id, name: 'greets', caller: { lines: ['hello'] }, expect: { says: ['Amy'] } });
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/agent-tests/${id}`,
      headers: bearer(ada.token),
      payload: { ...body, name: 'greets as Amy' },
    });
    expect(put.json().name).toBe('greets as Amy');
    const list = await t.app.inject({ url: '/api/agent-tests', headers: bearer(ada.token) });
    expect(list.json().some((x: { id: string; lastResult: unknown }) => x.id === id && x.lastResult === null)).toBe(
      true,
    );

    for (const req of [
      { method: 'GET' as const, url: `/api/agent-tests/${id}` },
      { method: 'PUT' as const, url: `/api/agent-tests/${id}`, payload: body },
      { method: 'DELETE' as const, url: `/api/agent-tests/${id}` },
      { method: 'POST' as const, url: `/api/agent-tests/${id}/runs` },
      { method: 'POST' as const, url: '/api/agent-tests/runs', payload: { testIds: [id] } },
    ]) {
      const res = await t.app.inject({ ...req, headers: bearer(eve.token) });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(404);
    }
    const eveList = await t.app.inject({ url: '/api/agent-tests', headers: bearer(eve.token) });
    expect(eveList.json().some((x: { id: string }) => x.id === id)).toBe(false);

    const runId = await start(ada, [id]);
    expect((await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(eve.token) })).statusCode).toBe(
      404,
    );
    await waitFor(ada, runId);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/agent-tests/${id}`, headers: bearer(ada.token) });
    expect(del.statusCode).toBe(204);
    expect((await t.app.inject({ url: `/api/agent-tests/${id}`, headers: bearer(ada.token) })).statusCode).toBe(404);
  });

  it('refuses what cannot run: both or neither agent, a goal with no model, voice mode', async () => {
    const base = { name: 'x', caller: { lines: ['hi'] }, expect: {} };
    for (const payload of [
      base,
      { ...base, agent: amy, agentId: 'abc' },
      { ...base, agent: amy, caller: { goal: 'book a meeting' } },
      { ...base, agent: amy, mode: 'voice' },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/api/agent-tests', headers: bearer(ada.token), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
  });

  it('starts runs only for a verified phone, and not with no tests', async () => {
    const newcomer = await registerUser(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/agent-tests/runs', headers: bearer(newcomer.token) });
    expect(res.statusCode).toBe(403);
    const lonely = await createVerifiedUser(t);
    const none = await t.app.inject({ method: 'POST', url: '/api/agent-tests/runs', headers: bearer(lonely.token) });
    expect(none.statusCode).toBe(400);
  });
});

describe('agent tests: every expectation kind, passing and failing for the right reason', () => {
  it('passes a booking conversation on every kind of expectation it names, in well under a second', async () => {
    const r = await runOne(ada, {
      name: 'books a meeting',
      agent: { ...amy, integrations: [calendar] },
      caller: { lines: bookingLines },
      expect: {
        outcome: 'completed',
        toolCalls: [
          { name: 'check_availability', arguments: { date: '2026-12-08' } },
          { name: 'book_meeting', arguments: { start: '2026-12-08T09:00:00.000Z' } },
          { name: 'end_call' },
        ],
        noToolCalls: ['transfer_to_human', 'search_knowledge'],
        says: ['this is amy', "You're booked for Tuesday 8 December"],
        neverSays: ["can't book"],
        maxTurns: 3,
        // A bound a loaded machine cannot break: how fast tests run is the bench's (bench/agent-tests.ts), the check's logic checks.test.ts's.
        maxLatencyMs: 30_000,
      },
    });
    expect(r.checks.filter((c) => !c.passed)).toEqual([]);
    expect(r.status).toBe('passed');
    expect(r.checks).toHaveLength(11);
    expect(r.durationMs).toBeGreaterThan(0);
    // Sandbox side effects: the booking link is the sandbox calendar's, on the reserved .invalid domain.
    const booked = r.toolCalls.find((c) => c.name === 'book_meeting')!;
    expect(booked.result).toMatchObject({ booked: true });
    expect(String(booked.result.bookingUrl)).toMatch(/^https:\/\/calendly\.sandbox\.invalid\//);
  });

  it('fails each expectation on what differs, saying expected and actual', async () => {
    // The same conversation with no calendar: the agent cannot book, and is stopped after two turns.
    const r = await runOne(ada, {
      name: 'books without a calendar',
      agent: amy,
      caller: { lines: bookingLines },
      expect: {
        outcome: 'completed',
        toolCalls: [{ name: 'book_meeting' }],
        says: ["You're booked"],
        neverSays: ["can't book"],
        maxTurns: 2,
      },
    });
    expect(r.status).toBe('failed');
    expect(r.checks.filter((c) => !c.passed).map((c) => c.name)).toEqual([
      'outcome',
      'toolCalls[0]',
      'says[0]',
      'neverSays[0]',
      'maxTurns',
    ]);
    expect(check(r, 'outcome')).toMatchObject({ expected: 'completed', actual: 'max_duration (max_turns)' });
    expect(check(r, 'toolCalls[0]').actual).toEqual([]);
    expect(check(r, 'says[0]').actual).toContain('Hello, this is Amy from the clinic. How can I help?');
    expect(check(r, 'neverSays[0]').actual).toMatch(/can't book meetings on this call/);
    expect(check(r, 'maxTurns').actual).toBe('2 (stopped there, not finished)');

    // With the calendar: the arguments differ, and a tool that must not be called is.
    const wrong = await runOne(ada, {
      name: 'books on Wednesday',
      agent: { ...amy, integrations: [calendar] },
      caller: { lines: bookingLines },
      expect: {
        toolCalls: [{ name: 'check_availability', arguments: { date: '2026-12-09' } }, { name: 'end_call' }],
        noToolCalls: ['book_meeting'],
      },
    });
    expect(wrong.checks.map((c) => [c.name, c.passed])).toEqual([
      ['toolCalls[0]', false],
      ['toolCalls[1]', true],
      ['noToolCalls[0]', false],
    ]);
    expect(check(wrong, 'toolCalls[0]').actual).toEqual([
      { name: 'check_availability', arguments: { date: '2026-12-08' } },
    ]);
    expect(check(wrong, 'noToolCalls[0]').actual).toEqual([
      { name: 'book_meeting', arguments: { start: '2026-12-08T09:00:00.000Z' } },
    ]);
  });

  it('walks a pathway agent: path and variables pass, and fail naming the nodes and values seen', async () => {
    const pathway = {
      name: 'Pizza',
      start: 'greet',
      variables: { size: { type: 'enum', values: ['small', 'large'] } },
      nodes: [
        { id: 'greet', type: 'conversation', say: 'Welcome to Pizza Co. What size would you like?', extract: ['size'] },
        { id: 'confirm', type: 'end', say: 'One {{size}} pizza, coming up. Goodbye!' },
      ],
      edges: [{ from: 'greet', to: 'confirm', if: { var: 'size', op: 'exists' } }],
    };
    const passing = await runOne(ada, {
      name: 'orders a large pizza',
      agent: { name: 'Pizza bot', pathway },
      caller: { lines: ['A large one please', 'Are you still there?'] },
      expect: {
        path: ['greet', 'confirm'],
        variables: { size: 'large' },
        says: ['One large pizza'],
        outcome: 'completed',
        maxTurns: 1,
      },
    });
    expect(passing.checks.filter((c) => !c.passed)).toEqual([]);
    expect(passing.path).toEqual(['greet', 'confirm']);
    expect(passing.transcript[0]).toMatchObject({
      role: 'agent',
      text: 'Welcome to Pizza Co. What size would you like?',
    });

    const failing = await runOne(ada, {
      name: 'orders a small pizza',
      agent: { name: 'Pizza bot', pathway },
      caller: { lines: ['A large one please'] },
      expect: { path: ['greet', 'person'], variables: { size: 'small', crust: 'thin' } },
    });
    expect(failing.status).toBe('failed');
    expect(check(failing, 'path')).toMatchObject({ passed: false, actual: ['greet', 'confirm'] });
    expect(check(failing, 'variables.size')).toMatchObject({ passed: false, expected: 'small', actual: 'large' });
    expect(check(failing, 'variables.crust')).toMatchObject({ passed: false, actual: null });
  });

  it('checks the post-call analysis of the conversation: success and collected data, passing and failing', async () => {
    const agent = {
      ...amy,
      integrations: [calendar],
      analysis: {
        successCriteria: 'The caller booked a meeting',
        schema: { type: 'object', properties: { meeting_day: { type: 'string', format: 'date' } } },
      },
    };
    const r = await runOne(ada, {
      name: 'analysed booking',
      agent,
      caller: { lines: bookingLines },
      expect: { analysis: { success: true, data: { meeting_day: '2026-12-08' } } },
    });
    expect(r.checks.map((c) => [c.name, c.passed])).toEqual([
      ['analysis.success', true],
      ['analysis.data.meeting_day', true],
    ]);
    expect((r as { analysis?: unknown }).analysis).toMatchObject({ status: 'completed', by: 'sandbox', success: true });
    const unbooked = await runOne(ada, {
      name: 'analysed without a calendar',
      agent: { ...agent, integrations: [] },
      caller: { lines: bookingLines },
      expect: { analysis: { success: true, data: { meeting_day: '2026-12-09' } } },
    });
    expect(check(unbooked, 'analysis.success')).toMatchObject({ passed: false, expected: true, actual: false });
    // The day the caller asked for is collected all the same, and it is not the one expected.
    expect(check(unbooked, 'analysis.data.meeting_day')).toMatchObject({ passed: false, actual: '2026-12-08' });
  });

  it('marks a test whose agent is not there as error, not failed', async () => {
    const r = await runOne(ada, {
      name: 'stored agent',
      agentId: '019ae0c1-2b3c-7d4e-8f50-000000000000',
      caller: { lines: ['hello'] },
      expect: { says: ['hello'] },
    });
    expect(r.status).toBe('error');
    expect(r.error).toMatch(/not found/);
  });
});

describe('agent tests: suites, events, limits, JUnit', () => {
  it('runs a suite of every test, emits agent_test_run events, and reports it as JUnit XML', async () => {
    const user = await createVerifiedUser(t);
    const pass = await create(user, {
      name: 'greets & <says> "Amy"',
      agent: amy,
      caller: { lines: ['hi'] },
      expect: { says: ['Amy'] },
    });
    const fail = await create(user, {
      name: 'says a price',
      agent: amy,
      caller: { lines: ['hi'] },
      expect: { says: ['$20'] },
    });
    const runId = await start(user);
    const run = await waitFor(user, runId);
    expect(run.status).toBe('failed');
    expect(run.summary).toEqual({ total: 2, passed: 1, failed: 1, error: 0 });
    expect(run.results.map((r) => [r.testId, r.status])).toEqual([
      [pass.id, 'passed'],
      [fail.id, 'failed'],
    ]);

    const events = await t.services.database.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('user_id', '=', user.id)
      .where('type', '=', 'agent_test_run')
      .orderBy('id')
      .execute();
    expect(events.map((e) => JSON.parse(e.payload).status)).toEqual(['queued', 'running', 'failed']);
    expect(JSON.parse(events[0]!.payload).run_id).toBe(runId);

    const xml = await t.app.inject({
      url: `/api/agent-tests/runs/${runId}`,
      headers: { ...bearer(user.token), accept: 'application/xml' },
    });
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    expect(xml.body).toContain('<testsuite name="agent-tests"');
    expect(xml.body).toContain('name="greets &amp; &lt;says&gt; &quot;Amy&quot;"');
    expect(xml.body).toMatch(/<failure message="1 of 1 checks failed: says\[0\]"/);

    // The list shows each test's last result, a failed one with its failed check.
    const list = (await t.app.inject({ url: '/api/agent-tests', headers: bearer(user.token) })).json() as Array<{
      id: string;
      lastResult: { status: string; failedChecks: Check[] };
    }>;
    expect(list.find((x) => x.id === fail.id)!.lastResult).toMatchObject({
      status: 'failed',
      failedChecks: [{ name: 'says[0]', expected: '$20' }],
    });
    expect(list.find((x) => x.id === pass.id)!.lastResult).toMatchObject({ status: 'passed', failedChecks: [] });
  });

  it('runs again, once, a test whose instance died mid-run; its run ends with one result and one end event', async () => {
    const user = await createVerifiedUser(t);
    const { id } = await create(user, {
      name: 'survives',
      agent: amy,
      caller: { lines: ['hi'] },
      expect: { says: ['Amy'] },
    });
    await t.services.platform.jobs.stop();
    let runId: string;
    try {
      runId = await start(user, [id]);
      // A dying instance claims the test's job and never finishes it (kill -9).
      const jobs = new JobStore(t.database.db, t.database.dialect);
      const now = t.clock.now();
      const [claimed] = await jobs.claimDue('agent_test', now, now + 60_000, 10);
      expect(JSON.parse(claimed!.payload)).toEqual({ runId, position: 0 });
      t.services.platform.jobs.start();
      await new Promise((r) => setTimeout(r, 100));
      const held = (await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(user.token) })).json();
      expect(held.status).toBe('queued'); // the dead instance's lease still holds
      t.clock.advance(61_000);
      t.services.platform.jobs.wake('agent_test');
    } catch (err) {
      t.services.platform.jobs.start();
      throw err;
    }
    const run = await waitFor(user, runId);
    expect(run.status).toBe('passed');
    expect(run.results).toHaveLength(1);
    const events = await t.services.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', user.id)
      .where('type', '=', 'agent_test_run')
      .orderBy('id')
      .execute();
    expect(events.map((e) => JSON.parse(e.payload).status)).toEqual(['queued', 'running', 'passed']);
  });

  it('admits at most 20 runs queued or running per account, counted in the database, whoever asks at once', async () => {
    const user = await createVerifiedUser(t);
    const { id } = await create(user, { name: 'quick', agent: amy, caller: { lines: ['hi'] }, expect: {} });
    // Held queued: the queue is stopped while the runs are asked for.
    await t.services.platform.jobs.stop();
    try {
      const answers = await Promise.all(
        Array.from({ length: 25 }, () =>
          t.app.inject({ method: 'POST', url: `/api/agent-tests/${id}/runs`, headers: bearer(user.token) }),
        ),
      );
      const codes = answers.map((a) => a.statusCode);
      expect(codes.filter((c) => c === 202)).toHaveLength(20);
      expect(codes.filter((c) => c === 429)).toHaveLength(5);
      expect(answers.find((a) => a.statusCode === 429)!.json()).toMatchObject({ code: 'concurrency_limit', limit: 20 });
    } finally {
      t.services.platform.jobs.start();
    }
    const runs = await t.services.database.db
      .selectFrom('agent_test_runs')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    for (const r of runs) expect((await waitFor(user, r.id)).status).toBe('passed');
    // Once they ended, another is admitted.
    const again = await t.app.inject({
      method: 'POST',
      url: `/api/agent-tests/${id}/runs`,
      headers: bearer(user.token),
    });
    expect(again.statusCode).toBe(202);
    await waitFor(user, again.json().runId);
  });
});
