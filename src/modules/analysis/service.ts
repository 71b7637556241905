// Post-call analysis (DESIGN.md "Post-call analysis and analytics"). When a
// call has been accounted for and its record written, a durable job is
// queued (the server's one job queue: it runs once even if the instance
// stops). The job reads the call record, and, when the caller said
// anything, has it analysed by the configured model or the sandbox
// analyser; it writes the result into the call record, a
// `performance-metrics` record for every call, a `tasks` record per open
// request (once), the figures analytics counts onto the call's row, and a
// `call_analysis` event and webhook. A failed analysis is recorded as
// `status: "failed"`; it never touches the call's own status, and neither
// does a job that gives up (its retries spent): the call is left with a
// failed analysis that says why. One job at a time holds a call's analysis
// (CallStore.claimAnalysis): two jobs for one call never both write. The
// call's row is read and written through the calls area's store.
import { AppError, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { iso } from '../../lib/time.js';
import type { AnalysisColumns, CallStore } from '../calls/store.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { JobQueue } from '../platform/jobs.js';
import type { WebhookService } from '../webhooks/service.js';
import { type CallFacts, callFacts, callFigures, callerLines } from './facts.js';
import { failed, type ModelAnalyser } from './model-analyser.js';
import { sandboxAnalysis } from './sandbox-analyser.js';
import type { CallAnalysis, PerformanceMetric, TaskRecord } from './schemas.js';
import type { AnalysisSettings } from './settings.js';
import { tallyOf } from './tally.js';

export const ANALYSIS_JOB = 'call_analysis';

interface AnalysisJob {
  sessionId: string;
  /** POST /api/calls/{id}/analysis: analyse again even when analysed already. */
  rerun?: boolean;
}

/** What analysis touches of the calls area's store of `call_sessions`. */
export type AnalysedSessions = Pick<
  CallStore,
  'db' | 'findForAnalysis' | 'claimAnalysis' | 'setMetricsObject' | 'markTasksWritten' | 'transaction'
>;

export interface AnalysisServiceDeps {
  /** The calls' rows (the calls area's CallStore). */
  sessions: AnalysedSessions;
  records: StoreRecords;
  /** What calls were charged in cents, their transfer legs included (the calls area's views). */
  chargedCents: (ids: string[]) => Promise<Map<string, number>>;
  events: EventRecorder;
  webhooks: Pick<WebhookService, 'enqueue' | 'wake'>;
  jobs: JobQueue;
  /** null: the sandbox analyser (no LLM_URL). */
  model: ModelAnalyser | null;
  clock: Clock;
}

type Summary = { agent?: { name?: string; id?: string; analysis?: AnalysisSettings } };

export class AnalysisService {
  constructor(private readonly deps: AnalysisServiceDeps) {
    deps.jobs.define<AnalysisJob>(ANALYSIS_JOB, {
      run: (job) => this.analyse(job.payload, job.id),
      // A job that keeps failing (a record unreadable, the database away): the call's analysis is failed, with why.
      gaveUp: (job, error) => this.gaveUp(job.payload, job.id, job.attempt, error),
      concurrency: 2,
      maxAttempts: 3,
    });
  }

  /** Who analyses: `model` (LLM_URL) or `sandbox`. */
  get by(): 'model' | 'sandbox' {
    return this.deps.model ? 'model' : 'sandbox';
  }

  /** CallService.onFinished: queues the call's analysis (the record is written by now). Never throws. */
  async callFinished(session: { id: string; userId: string }): Promise<void> {
    await this.deps.jobs.enqueue(this.deps.sessions.db, [
      { kind: ANALYSIS_JOB, userId: session.userId, payload: { sessionId: session.id } satisfies AnalysisJob },
    ]);
  }

  /** POST /api/calls/{id}/analysis: 404 for a call that is not the user's, 409 while it has no record. */
  async rerun(userId: string, sessionId: string): Promise<{ status: 'queued' }> {
    const session = await this.deps.sessions.findForAnalysis(sessionId);
    if (!session || session.user_id !== userId) throw notFound('call');
    if (!session.record_object_id)
      throw new AppError('conflict', 'the call has not ended yet: it is analysed when it ends');
    await this.deps.jobs.enqueue(this.deps.sessions.db, [
      { kind: ANALYSIS_JOB, userId, payload: { sessionId, rerun: true } satisfies AnalysisJob },
    ]);
    return { status: 'queued' };
  }

  /**
   * The job `jobId`: analyses one ended call and writes what it found. Safe to
   * run twice (a second first run does nothing) and beside another job for the
   * same call (the one that holds the call writes; CallStore.claimAnalysis).
   */
  async analyse(job: AnalysisJob, jobId: string): Promise<void> {
    const { sessions, records, clock } = this.deps;
    const session = await sessions.findForAnalysis(job.sessionId);
    if (!session?.record_object_id) return;
    if (session.analysis_status !== null && !job.rerun) return;
    if (!(await sessions.claimAnalysis(session.id, jobId, job.rerun === true))) return;
    const userId = session.user_id;
    const record = JSON.parse(
      (await records.read(userId, 'calls', session.record_object_id)).toString('utf8'),
    ) as Record<string, unknown>;
    const summary = JSON.parse(session.summary) as Summary;
    const settings = summary.agent?.analysis ?? {};
    const facts = callFacts(session.id, record, session.finished_at ?? clock.now());
    const analysis = callerLines(facts).length > 0 ? await this.analysis(facts, settings) : null;
    const cents = (await this.deps.chargedCents([session.id])).get(session.id) ?? null;
    const figures = callFigures(facts);
    const agentKey = summary.agent?.id ?? summary.agent?.name ?? null;

    const metric: PerformanceMetric = {
      sessionId: session.id,
      agent: { ...(summary.agent?.id ? { id: summary.agent.id } : {}), name: summary.agent?.name ?? facts.agent.name },
      ...(session.campaign_id ? { campaignId: session.campaign_id } : {}),
      direction: session.direction,
      outcome: session.outcome ?? facts.outcome,
      durationSeconds: session.duration_seconds ?? facts.durationSeconds,
      costUsd: (cents ?? 0) / 100,
      turns: figures.turns,
      interruptions: figures.interruptions,
      latency: figures.latency,
      success: analysis?.status === 'completed' ? analysis.success : null,
    };
    const metricBytes = Buffer.from(JSON.stringify(metric), 'utf8');
    if (session.metrics_object_id)
      await records.replace(userId, 'performance-metrics', session.metrics_object_id, metricBytes);
    else
      await sessions.setMetricsObject(
        session.id,
        (await records.create(userId, 'performance-metrics', metricBytes)).id,
      );

    if (analysis) {
      await records.replace(
        userId,
        'calls',
        session.record_object_id,
        Buffer.from(JSON.stringify({ ...record, analysis }), 'utf8'),
      );
      // Tasks are written once: a re-run updates the analysis, not the account's task list.
      if (analysis.status === 'completed' && analysis.tasks.length && session.tasks_written_at === null) {
        for (const task of analysis.tasks) {
          const taskRecord: TaskRecord = { ...task, sessionId: session.id, contact: facts.contact };
          await records.create(userId, 'tasks', Buffer.from(JSON.stringify(taskRecord), 'utf8'));
        }
        await sessions.markTasksWritten(session.id, clock.now());
      }
    }
    await this.finish(session, jobId, analysis, {
      agent_id: agentKey,
      success: metric.success === null ? null : metric.success ? 1 : 0,
      cost_cents: cents,
      latency_p50_ms: figures.latency.p50Ms,
      latency_p95_ms: figures.latency.p95Ms,
      tally: tallyOf({
        status: session.status,
        outcome: session.outcome ?? facts.outcome,
        answeredAt: session.answered_at,
        ended: true,
        success: metric.success,
      }),
      analysis_status: analysis?.status ?? 'skipped',
    });
  }

  /**
   * The row's columns, the `call_analysis` event and the call's webhook, in
   * one transaction, if `jobId` still holds the call's analysis.
   */
  private async finish(
    session: { id: string; user_id: string; webhook_url: string | null },
    jobId: string,
    analysis: CallAnalysis | null,
    columns: Parameters<CallStore['writeAnalysis']>[2],
  ): Promise<void> {
    const { sessions, events, webhooks } = this.deps;
    const payload = analysis
      ? { session_id: session.id, status: analysis.status, success: analysis.success, at: iso(this.deps.clock.now()) }
      : null;
    const written = await sessions.transaction(async (tx) => {
      if (!(await tx.writeAnalysis(session.id, jobId, columns))) return false;
      if (!payload) return true;
      await events.record(tx.db, [{ userId: session.user_id, type: 'call_analysis', payload: { ...payload } }]);
      if (session.webhook_url)
        await webhooks.enqueue(tx.db, [
          { userId: session.user_id, url: session.webhook_url, type: 'call_analysis', data: { ...payload } },
        ]);
      return true;
    });
    if (!written || !payload) return;
    events.announce();
    if (session.webhook_url) webhooks.wake();
  }

  /**
   * The job's last attempt failed (or its instance died on it that many
   * times): the call gets a failed analysis saying why, in its record when
   * that can be written, on its row (counted as ended, success undecided),
   * with the `call_analysis` event and webhook of a failed analysis. Only
   * what is known is written: the figures of an earlier analysis stay.
   */
  private async gaveUp(job: AnalysisJob, jobId: string, attempts: number, error: string): Promise<void> {
    const { sessions, records, clock } = this.deps;
    const session = await sessions.findForAnalysis(job.sessionId);
    if (!session?.record_object_id) return;
    // A re-run that gave up fails the analysis only while it holds the call (a later re-run's stands).
    if (job.rerun ? session.analysis_job_id !== jobId : !(await sessions.claimAnalysis(session.id, jobId, false)))
      return;
    const analysis = failed(
      `the analysis gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${error}`,
      clock.now(),
      this.by,
    );
    const summary = JSON.parse(session.summary) as Summary;
    const known: Partial<AnalysisColumns> = { agent_id: summary.agent?.id ?? summary.agent?.name ?? null };
    try {
      const record = JSON.parse(
        (await records.read(session.user_id, 'calls', session.record_object_id)).toString('utf8'),
      ) as Record<string, unknown>;
      const { latency } = callFigures(callFacts(session.id, record, session.finished_at ?? clock.now()));
      known.latency_p50_ms = latency.p50Ms;
      known.latency_p95_ms = latency.p95Ms;
      await records.replace(
        session.user_id,
        'calls',
        session.record_object_id,
        Buffer.from(JSON.stringify({ ...record, analysis }), 'utf8'),
      );
    } catch {
      // The record cannot be read or written (what the job met, perhaps): the row and the event still say so.
    }
    await this.finish(session, jobId, analysis, {
      ...known,
      success: null,
      tally: tallyOf({
        status: session.status,
        outcome: session.outcome,
        answeredAt: session.answered_at,
        ended: true,
        success: null,
      }),
      analysis_status: 'failed',
    });
  }

  /** The model's analysis, or the sandbox analyser's; a failure of either is a failed analysis, never an exception. Agent tests analyse their conversations with it too. */
  async analysis(facts: CallFacts, settings: AnalysisSettings): Promise<CallAnalysis> {
    const now = () => this.deps.clock.now();
    if (this.deps.model) return this.deps.model.analyse(facts, settings, now);
    try {
      return sandboxAnalysis(facts, settings, now());
    } catch (err) {
      return failed(`the sandbox analyser failed: ${(err as Error).message}`, now(), 'sandbox');
    }
  }
}
