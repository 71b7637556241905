// Agent tests (DESIGN.md "Agent tests"): tests as data, runs of one test or a
// suite as durable jobs (one job per test of a run, on the server's job
// queue), results with every check's expected and actual value, and an
// `agent_test_run` event when a run is queued, starts and ends. Never charged;
// at most `maxRunsPerUser` runs queued or running per account.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import type { EventRecorder } from '../events/recorder.js';
import type { ClaimedJob, JobQueue } from '../platform/jobs.js';
import type { AgentTest, AgentTestInput, TestResult, TestRun } from './schemas.js';
import { AgentTestStore } from './store.js';
import type { AgentTestResultsTable, AgentTestRunStatus, AgentTestsTable } from './tables.js';
import type { TestOutcome, TestRunner } from './runner.js';
import { nextSlice } from './slices.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

export const AGENT_TEST_JOB = 'agent_test';
/** Voice tests are web calls at real pace: one at a time per instance (the web calls' own limits hold them too). */
export const VOICE_TEST_JOB = 'agent_test_voice';
export const MAX_TESTS_PER_USER = 1000;

export interface AgentTestServiceDeps {
  store: AgentTestStore;
  db: Kysely<Database>;
  dialect: Dialect;
  jobs: JobQueue;
  runner: Pick<TestRunner, 'run'>;
  events: EventRecorder;
  secretBox: SecretBox;
  clock: Clock;
  /** A goal-driven caller needs a real model (LLM_URL). */
  modelConfigured: boolean;
  maxRunsPerUser: number;
  /** Tests of one run executing at once on this instance. */
  concurrency: number;
}

/** The last result of a test, as the list shows it. */
export interface LastResult {
  runId: string;
  status: AgentTestRunStatus;
  finishedAt: string | null;
  failedChecks: TestResult['checks'];
}

interface JobPayload {
  runId: string;
  position: number;
}

export class AgentTestService {
  constructor(private readonly deps: AgentTestServiceDeps) {
    for (const [kind, concurrency] of [
      [AGENT_TEST_JOB, deps.concurrency],
      [VOICE_TEST_JOB, 1],
    ] as const)
      deps.jobs.define<JobPayload>(kind, {
        concurrency,
        leaseMs: 60_000,
        maxAttempts: 2,
        retryDelayMs: () => 1000,
        run: (job, signal) => this.runJob(job, signal),
        gaveUp: (job, error) => this.gaveUp(job, error),
      });
  }

  private check(input: AgentTestInput) {
    if ((input.agent === undefined) === (input.agentId === undefined))
      throw invalidInput('send exactly one of agentId (an object of your agents store) and agent (an agent record)');
    if (input.pathway !== undefined && input.pathwayId !== undefined)
      throw invalidInput('name the pathway by pathway or by pathwayId, not both');
    if ('goal' in input.caller && !this.deps.modelConfigured)
      throw invalidInput(
        'caller.goal needs a language model to play the caller (set LLM_URL); the sandbox dialogue engine takes caller.lines',
      );
    if (input.mode === 'voice' && !('lines' in input.caller))
      throw invalidInput('mode "voice" speaks caller.lines: a goal-driven caller talks in text mode only');
    if (input.mode === 'voice' && input.sideEffects !== 'live')
      throw invalidInput(
        'mode "voice" is a real web call, whose tools act as on any call: say so with sideEffects "live" (or use mode "text")',
      );
  }

  private view(row: AgentTestsTable): AgentTest {
    const input = JSON.parse(this.deps.secretBox.openText(row.definition)) as AgentTestInput;
    return { id: row.id, ...input, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
  }

  async create(userId: string, input: AgentTestInput): Promise<AgentTest> {
    this.check(input);
    const existing = await this.deps.store.listTests(userId, MAX_TESTS_PER_USER);
    if (existing.length >= MAX_TESTS_PER_USER)
      throw new AppError('quota_exceeded', `at most ${MAX_TESTS_PER_USER} agent tests per account`);
    const now = this.deps.clock.now();
    const row: AgentTestsTable = {
      id: newId(now),
      user_id: userId,
      name: input.name,
      definition: this.deps.secretBox.seal(JSON.stringify(input)),
      created_at: now,
      updated_at: now,
    };
    await this.deps.store.insertTest(row);
    return this.view(row);
  }

  async get(userId: string, id: string): Promise<AgentTest> {
    const row = await this.deps.store.findTest(userId, id);
    if (!row) throw notFound('agent test');
    return this.view(row);
  }

  async list(userId: string): Promise<Array<AgentTest & { lastResult: LastResult | null }>> {
    const rows = await this.deps.store.listTests(userId);
    const last = new Map(
      (
        await this.deps.store.lastResults(
          userId,
          rows.map((r) => r.id),
        )
      ).map((r) => [r.test_id, r]),
    );
    return rows.map((row) => {
      const result = last.get(row.id);
      return {
        ...this.view(row),
        lastResult: result
          ? {
              runId: result.run_id,
              status: result.status,
              finishedAt: result.finished_at === null ? null : iso(result.finished_at),
              failedChecks: this.openResult(result).checks.filter((c) => !c.passed),
            }
          : null,
      };
    });
  }

  async update(userId: string, id: string, input: AgentTestInput): Promise<AgentTest> {
    this.check(input);
    const now = this.deps.clock.now();
    const definition = this.deps.secretBox.seal(JSON.stringify(input));
    if (!(await this.deps.store.updateTest(userId, id, { name: input.name, definition, now })))
      throw notFound('agent test');
    return this.get(userId, id);
  }

  async delete(userId: string, id: string): Promise<void> {
    if (!(await this.deps.store.deleteTest(userId, id))) throw notFound('agent test');
  }

  /**
   * Queues a run of these tests (all of the user's when absent): 404 for a
   * test that is not theirs, 400 for none at all, 429 `concurrency_limit` when
   * `maxRunsPerUser` runs are queued or running already. The run, its result
   * rows, its jobs and its `queued` event are written in one transaction.
   */
  async startRun(userId: string, testIds?: string[]): Promise<{ runId: string }> {
    const { store, clock, jobs } = this.deps;
    let tests: AgentTestsTable[];
    if (testIds) {
      const unique = [...new Set(testIds)];
      tests = [];
      for (const id of unique) {
        const row = await store.findTest(userId, id);
        if (!row) throw notFound(`agent test ${id}`);
        tests.push(row);
      }
    } else tests = await store.listTests(userId);
    if (!tests.length) throw invalidInput('there is no agent test to run: create one with POST /api/agent-tests');
    const now = clock.now();
    const runId = newId(now);
    const voiceTests = new Set(
      tests
        .filter((t) => (JSON.parse(this.deps.secretBox.openText(t.definition)) as AgentTestInput).mode === 'voice')
        .map((t) => t.id),
    );
    await this.serialized(userId, async (trx) => {
      const unfinished = await store.unfinishedRuns(trx, userId);
      if (unfinished >= this.deps.maxRunsPerUser)
        throw new AppError(
          'concurrency_limit',
          `at most ${this.deps.maxRunsPerUser} agent test runs may be queued or running at once: wait for one to end`,
          { limit: this.deps.maxRunsPerUser },
        );
      const results: AgentTestResultsTable[] = tests.map((t, position) => ({
        run_id: runId,
        position,
        test_id: t.id,
        user_id: userId,
        test_name: t.name,
        status: 'queued',
        result: null,
        duration_ms: null,
        created_at: now,
        finished_at: null,
      }));
      await AgentTestStore.insertRun(
        trx,
        { id: runId, user_id: userId, status: 'queued', total: tests.length, created_at: now, finished_at: null },
        results,
      );
      await jobs.enqueue(
        trx,
        results.map((r, i) => ({
          kind: voiceTests.has(tests[i]!.id) ? VOICE_TEST_JOB : AGENT_TEST_JOB,
          userId,
          payload: { runId, position: r.position },
        })),
      );
      await this.deps.events.record(trx, [this.event(userId, runId, 'queued', now)]);
    });
    this.deps.events.announce();
    jobs.wake(AGENT_TEST_JOB);
    jobs.wake(VOICE_TEST_JOB);
    return { runId };
  }

  /** The limit is checked and the run written in one transaction, one at a time per user (PostgreSQL: an advisory lock). */
  private async serialized(userId: string, work: (trx: Kysely<Database>) => Promise<void>): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      await lockForTransaction(trx, this.deps.dialect, `agent-test-runs:${userId}`);
      await work(trx);
    });
  }

  private event(userId: string, runId: string, status: AgentTestRunStatus, at: number) {
    return { userId, type: 'agent_test_run' as const, payload: { run_id: runId, status, at: iso(at) } };
  }

  private async announce(userId: string, runId: string, status: AgentTestRunStatus) {
    await this.deps.events.record(this.deps.db, [this.event(userId, runId, status, this.deps.clock.now())]);
    this.deps.events.announce();
  }

  async getRun(userId: string, runId: string): Promise<TestRun> {
    const run = await this.deps.store.findRun(userId, runId);
    if (!run) throw notFound('agent test run');
    const rows = await this.deps.store.results(runId);
    const results = rows.map((r) => this.openResult(r));
    const count = (s: AgentTestRunStatus) => results.filter((r) => r.status === s).length;
    return {
      runId: run.id,
      status: run.status,
      createdAt: iso(run.created_at),
      finishedAt: run.finished_at === null ? null : iso(run.finished_at),
      summary: { total: run.total, passed: count('passed'), failed: count('failed'), error: count('error') },
      results,
    };
  }

  private openResult(row: AgentTestResultsTable): TestResult {
    const base: TestResult = {
      testId: row.test_id,
      name: row.test_name,
      status: row.status,
      checks: [],
      transcript: [],
      toolCalls: [],
      durationMs: row.duration_ms,
    };
    if (!row.result) return base;
    return { ...base, ...(JSON.parse(this.deps.secretBox.openText(row.result)) as Partial<TestResult>) };
  }

  private async runJob(job: ClaimedJob<JobPayload>, signal: AbortSignal): Promise<void> {
    const { store, clock } = this.deps;
    const { runId, position } = job.payload;
    // Each test starts, and is recorded, on a turn of the event loop of its own (slices.ts).
    await nextSlice();
    const row = await store.findResult(runId, position);
    if (!row || row.finished_at !== null) return;
    if (await store.startRun(runId)) await this.announce(row.user_id, runId, 'running');
    await store.markRunning(runId, position);
    const test = await store.findTest(row.user_id, row.test_id);
    const started = performance.now();
    let outcome: TestOutcome;
    if (!test)
      outcome = { status: 'error', checks: [], conversation: null, warnings: [], error: 'the test was deleted' };
    else {
      const input = JSON.parse(this.deps.secretBox.openText(test.definition)) as AgentTestInput;
      try {
        outcome = await this.deps.runner.run(row.user_id, input, signal);
      } catch (error) {
        if (signal.aborted) throw error;
        // What the test names is not there (an agent, a knowledge base, a pathway) or not valid: it cannot run, it did not fail.
        if (error instanceof AppError)
          outcome = { status: 'error', checks: [], conversation: null, warnings: [], error: error.message };
        else throw error;
      }
    }
    const durationMs = Math.round(performance.now() - started);
    await nextSlice();
    await this.record(row, outcome, durationMs, clock.now());
  }

  private async record(row: AgentTestResultsTable, outcome: TestOutcome, durationMs: number | null, now: number) {
    const c = outcome.conversation;
    const result: Partial<TestResult> & { warnings?: string[] } = {
      status: outcome.status,
      checks: outcome.checks,
      transcript: c?.transcript ?? [],
      toolCalls: c?.toolCalls ?? [],
      ...(c ? { outcome: c.outcome } : {}),
      ...(c?.path ? { path: c.path } : {}),
      ...(c?.variables ? { variables: c.variables } : {}),
      ...(c?.analysis ? { analysis: c.analysis } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(outcome.warnings.length ? { warnings: outcome.warnings } : {}),
      durationMs,
    };
    const sealed = this.deps.secretBox.seal(JSON.stringify(result));
    await this.deps.store.finishResult(row.run_id, row.position, {
      status: outcome.status,
      result: sealed,
      durationMs,
      now,
    });
    const ended = await this.deps.store.finishRunIfDone(row.run_id, now);
    if (ended) await this.announce(row.user_id, row.run_id, ended);
  }

  /** A test whose job failed twice (a provider down, its instance stopped): `error`, so the run still ends. */
  private async gaveUp(job: ClaimedJob<JobPayload>, error: string): Promise<void> {
    const row = await this.deps.store.findResult(job.payload.runId, job.payload.position);
    if (!row || row.finished_at !== null) return;
    await this.record(
      row,
      { status: 'error', checks: [], conversation: null, warnings: [], error },
      null,
      this.deps.clock.now(),
    );
  }
}
