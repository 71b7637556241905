// SQL of post-call analysis: the columns migration 510 added to a call's
// row (its agent, success, cost, latency, the state of its analysis and the
// records it wrote), read and written here; the calls area writes the rest
// of the row. Also the transaction the `call_analysis` event and webhook are
// written in with the row's state, and the claim that lets one job at a time
// write a call's analysis (`analysis_job_id`, migration 540).
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

export interface AnalysedSession {
  id: string;
  user_id: string;
  direction: string;
  status: string;
  outcome: string | null;
  summary: string;
  webhook_url: string | null;
  record_object_id: string | null;
  finished_at: number | null;
  answered_at: number | null;
  duration_seconds: number | null;
  campaign_id: string | null;
  metrics_object_id: string | null;
  tasks_written_at: number | null;
  analysis_status: string | null;
  /** The job that holds its analysis (claim). */
  analysis_job_id: string | null;
}

export interface AnalysisColumns {
  agent_id: string | null;
  success: number | null;
  cost_cents: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  tally: number;
  analysis_status: string;
}

export class AnalysisStore {
  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: Dialect,
  ) {}

  async findSession(id: string): Promise<AnalysedSession | undefined> {
    const row = await this.db
      .selectFrom('call_sessions')
      .select([
        'id',
        'user_id',
        'direction',
        'status',
        'outcome',
        'summary',
        'webhook_url',
        'record_object_id',
        'finished_at',
        'answered_at',
        'duration_seconds',
        'campaign_id',
        'metrics_object_id',
        'tasks_written_at',
        'analysis_status',
        'analysis_job_id',
      ])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      ...row,
      direction: row.direction ?? 'outbound',
      outcome: row.outcome ?? null,
      campaign_id: row.campaign_id ?? null,
      metrics_object_id: row.metrics_object_id ?? null,
      tasks_written_at:
        row.tasks_written_at === null || row.tasks_written_at === undefined ? null : Number(row.tasks_written_at),
      analysis_status: row.analysis_status ?? null,
      analysis_job_id: row.analysis_job_id ?? null,
      finished_at: row.finished_at === null ? null : Number(row.finished_at),
      answered_at: row.answered_at === null || row.answered_at === undefined ? null : Number(row.answered_at),
    };
  }

  /**
   * Takes the call's analysis for `jobId`, in one conditional update: a first
   * run only while the call is unanalysed and no other job holds it (two jobs
   * at the same instant: the database lets one update the row, the other
   * finds it taken), a re-run always (the latest asked for wins). False: the
   * job has nothing to write.
   */
  async claim(id: string, jobId: string, rerun: boolean): Promise<boolean> {
    let update = this.db
      .updateTable('call_sessions')
      .set({ analysis_job_id: jobId })
      .where('id', '=', id)
      .where('record_object_id', 'is not', null);
    if (!rerun)
      update = update
        .where('analysis_status', 'is', null)
        .where((eb) => eb.or([eb('analysis_job_id', 'is', null), eb('analysis_job_id', '=', jobId)]));
    const result = await update.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setMetricsObject(id: string, objectId: string): Promise<void> {
    await this.db.updateTable('call_sessions').set({ metrics_object_id: objectId }).where('id', '=', id).execute();
  }

  async setTasksWritten(id: string, at: number): Promise<void> {
    await this.db.updateTable('call_sessions').set({ tasks_written_at: at }).where('id', '=', id).execute();
  }

  /**
   * Writes the row's analysis columns through `db` (the transaction of the
   * event) if `jobId` still holds the analysis (a re-run asked for since has
   * taken it over). False: nothing written.
   */
  static async setColumns(
    db: Kysely<Database>,
    id: string,
    jobId: string,
    columns: Partial<AnalysisColumns> & Pick<AnalysisColumns, 'tally' | 'analysis_status'>,
  ): Promise<boolean> {
    const result = await db
      .updateTable('call_sessions')
      .set(columns)
      .where('id', '=', id)
      .where('analysis_job_id', '=', jobId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  transaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }
}
