// SQL of agent tests: tests, runs and their results.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AgentTestResultsTable, AgentTestRunStatus, AgentTestRunsTable, AgentTestsTable } from './tables.js';

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const resultRow = (r: AgentTestResultsTable): AgentTestResultsTable => ({
  ...r,
  position: Number(r.position),
  duration_ms: num(r.duration_ms),
  created_at: Number(r.created_at),
  finished_at: num(r.finished_at),
});
const runRow = (r: AgentTestRunsTable): AgentTestRunsTable => ({
  ...r,
  total: Number(r.total),
  created_at: Number(r.created_at),
  finished_at: num(r.finished_at),
});

export class AgentTestStore {
  constructor(readonly db: Kysely<Database>) {}

  async insertTest(row: AgentTestsTable): Promise<void> {
    await this.db.insertInto('agent_tests').values(row).execute();
  }

  findTest(userId: string, id: string): Promise<AgentTestsTable | undefined> {
    return this.db
      .selectFrom('agent_tests')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  listTests(userId: string, limit = 1000): Promise<AgentTestsTable[]> {
    return this.db
      .selectFrom('agent_tests')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async updateTest(userId: string, id: string, fields: { name: string; definition: string; now: number }) {
    const r = await this.db
      .updateTable('agent_tests')
      .set({ name: fields.name, definition: fields.definition, updated_at: fields.now })
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async deleteTest(userId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('agent_tests')
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** Runs of the user not finished yet (queued or running). */
  async unfinishedRuns(db: Kysely<Database>, userId: string): Promise<number> {
    const row = await db
      .selectFrom('agent_test_runs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  static async insertRun(db: Kysely<Database>, run: AgentTestRunsTable, results: AgentTestResultsTable[]) {
    await db.insertInto('agent_test_runs').values(run).execute();
    for (let i = 0; i < results.length; i += 200)
      await db
        .insertInto('agent_test_results')
        .values(results.slice(i, i + 200))
        .execute();
  }

  findRun(userId: string, runId: string): Promise<AgentTestRunsTable | undefined> {
    return this.db
      .selectFrom('agent_test_runs')
      .selectAll()
      .where('user_id', '=', userId)
      .where('id', '=', runId)
      .executeTakeFirst()
      .then((r) => (r ? runRow(r) : undefined));
  }

  async results(runId: string): Promise<AgentTestResultsTable[]> {
    const rows = await this.db
      .selectFrom('agent_test_results')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('position')
      .execute();
    return rows.map(resultRow);
  }

  async findResult(runId: string, position: number): Promise<AgentTestResultsTable | undefined> {
    const r = await this.db
      .selectFrom('agent_test_results')
      .selectAll()
      .where('run_id', '=', runId)
      .where('position', '=', position)
      .executeTakeFirst();
    return r ? resultRow(r) : undefined;
  }

  /** The latest finished result of each of these tests (one row per test, however many runs there were). */
  async lastResults(userId: string, testIds: string[]): Promise<AgentTestResultsTable[]> {
    if (!testIds.length) return [];
    const { rows } = await sql<AgentTestResultsTable>`
      select run_id, position, test_id, user_id, test_name, status, result, duration_ms, created_at, finished_at
        from (select r.*, row_number() over (partition by test_id order by created_at desc, run_id desc) as latest
                from agent_test_results r
               where user_id = ${userId} and finished_at is not null and test_id in (${sql.join(testIds)})) as ranked
       where latest = 1`.execute(this.db);
    return rows.map(resultRow);
  }

  /** A result moves to running once (its job may run again after a crash: it is running still). */
  async markRunning(runId: string, position: number): Promise<void> {
    await this.db
      .updateTable('agent_test_results')
      .set({ status: 'running' })
      .where('run_id', '=', runId)
      .where('position', '=', position)
      .where('status', 'in', ['queued', 'running'])
      .execute();
  }

  /** The run moves from queued to running; true when this call moved it. */
  async startRun(runId: string): Promise<boolean> {
    const r = await this.db
      .updateTable('agent_test_runs')
      .set({ status: 'running' })
      .where('id', '=', runId)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Records a result once (a second finisher of the same result changes nothing); true when this one did. */
  async finishResult(
    runId: string,
    position: number,
    fields: { status: AgentTestRunStatus; result: string; durationMs: number | null; now: number },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('agent_test_results')
      .set({ status: fields.status, result: fields.result, duration_ms: fields.durationMs, finished_at: fields.now })
      .where('run_id', '=', runId)
      .where('position', '=', position)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * Ends the run when none of its results is unfinished: `failed` when a
   * check failed, else `error` when one could not run, else `passed`. Returns
   * the status when this call ended it (once, whoever finishes last).
   */
  async finishRunIfDone(runId: string, now: number): Promise<AgentTestRunStatus | null> {
    const counts = await this.db
      .selectFrom('agent_test_results')
      .select(['status'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId)
      .groupBy('status')
      .execute();
    const by = Object.fromEntries(counts.map((c) => [c.status, Number(c.n)])) as Record<string, number>;
    if ((by.queued ?? 0) + (by.running ?? 0) > 0) return null;
    const status: AgentTestRunStatus = by.failed ? 'failed' : by.error ? 'error' : 'passed';
    const r = await this.db
      .updateTable('agent_test_runs')
      .set({ status, finished_at: now })
      .where('id', '=', runId)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? status : null;
  }
}
