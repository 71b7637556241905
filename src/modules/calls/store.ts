// SQL of call sessions and their progress reports: the one store of
// `call_sessions` (the calls area's records, progress and money; the voice
// agent's side of a session - the sealed assembled call, the answer, which
// instance carries the media and its heartbeat, the outcome - and post-call
// analysis's columns and its job's claim go through it too).
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { Batcher } from '../../db/batcher.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { Database } from '../../db/schema.js';
import type { CallProgressTable, CallSessionsTable } from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

/** What post-call analysis reads of a call's row. */
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
  /** The job that holds its analysis (claimAnalysis). */
  analysis_job_id: string | null;
}

/** The columns post-call analysis writes on a call's row (migration 510), for analytics to count. */
export interface AnalysisColumns {
  agent_id: string | null;
  success: number | null;
  cost_cents: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  tally: number;
  analysis_status: string;
}

const orNull = (value: number | string | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);

export class CallStore {
  private groupCommit: GroupCommit | null = null;
  /** PostgreSQL: session inserts and provider-id updates of one event-loop turn go out as one statement each (a burst of starts). */
  private readonly sessionInserts: Batcher<CallSessionsTable, void> | null;
  private readonly providerIds: Batcher<{ id: string; providerCallId: string }, void> | null;

  constructor(
    readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    /** A store bound to one transaction (transaction()) writes directly: its statements belong to that transaction. */
    bound = false,
  ) {
    const batched = dialect === 'postgres' && !bound;
    this.sessionInserts = batched
      ? Batcher.forWrites<CallSessionsTable>(
          async (rows) => void (await this.db.insertInto('call_sessions').values(rows).execute()),
        )
      : null;
    this.providerIds = batched
      ? Batcher.forWrites<{ id: string; providerCallId: string }>(async (items) => {
          const values = sql.join(items.map((i) => sql`(${i.id}::text, ${i.providerCallId}::text)`));
          await sql`update call_sessions as s set provider_call_id = v.pid from (values ${values}) as v(id, pid) where s.id = v.id`.execute(
            this.db,
          );
        })
      : null;
  }

  /**
   * Runs `work` in one transaction with a store bound to it (its `db` goes to
   * the event recorder and webhook queue). On SQLite, reports arriving
   * together share one commit, as data-plane writes do (db/group-commit.ts).
   */
  transaction<T>(work: (tx: CallStore) => Promise<T>): Promise<T> {
    const bound = (trx: Kysely<Database>) => work(new CallStore(trx, this.dialect, true));
    if (this.dialect === 'sqlite') return (this.groupCommit ??= new GroupCommit(this.db)).run(bound);
    return this.db.transaction().execute(bound);
  }

  async insertSession(row: CallSessionsTable): Promise<void> {
    if (this.sessionInserts) return this.sessionInserts.run(row);
    await this.db.insertInto('call_sessions').values(row).execute();
  }

  /**
   * Records a web session only while fewer than `max` of the user's web calls
   * are live (countLiveWeb), checked and written in one transaction, one at a
   * time per user (PostgreSQL: an advisory lock; SQLite runs one transaction
   * at a time): of many started at once exactly `max` are admitted, never
   * more and never none. False when the user is at the limit.
   */
  async insertWebUnderLimit(
    row: CallSessionsTable,
    limit: { max: number; finalStatuses: readonly string[]; connectableSince: number },
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockForTransaction(trx, this.dialect, `web-calls:${row.user_id}`);
      const bound = new CallStore(trx, this.dialect, true);
      const live = await bound.countLiveWeb(row.user_id, limit.finalStatuses, limit.connectableSince);
      if (live >= limit.max) return false;
      await bound.insertSession(row);
      return true;
    });
  }

  /** Removes a session nothing happened on yet (a web call refused right after it was recorded): no progress, no record. */
  async deleteUnstartedSession(id: string): Promise<void> {
    await this.db
      .deleteFrom('call_sessions')
      .where('id', '=', id)
      .where('status', '=', 'created')
      .where('media_instance', 'is', null)
      .execute();
  }

  findSession(id: string): Promise<CallSessionsTable | undefined> {
    return this.db.selectFrom('call_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async setProviderCallId(id: string, providerCallId: string): Promise<void> {
    if (this.providerIds) return this.providerIds.run({ id, providerCallId });
    await this.db.updateTable('call_sessions').set({ provider_call_id: providerCallId }).where('id', '=', id).execute();
  }

  findSessions(ids: readonly string[]): Promise<CallSessionsTable[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('call_sessions').selectAll().where('id', 'in', ids).execute();
  }

  /** Keeps the reports whose ids were not kept before; returns the ids kept now. */
  async insertProgressMany(rows: CallProgressTable[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const kept = await this.db
      .insertInto('call_progress')
      .values(rows)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    return new Set(kept.map((r) => r.id));
  }

  /**
   * PostgreSQL: advanceStatus for many sessions in one statement (each moves
   * only from one of its `from` statuses); returns the ids that moved.
   */
  async advanceStatusMany(
    moves: Array<{ id: string; from: readonly string[]; status: string; durationSeconds: number | null; now: number }>,
  ): Promise<Set<string>> {
    if (moves.length === 0) return new Set();
    const values = sql.join(
      moves.map(
        (m) =>
          sql`(${m.id}::text, ${m.status}::text, ${[...m.from]}::text[], ${m.durationSeconds}::integer, ${m.now}::bigint)`,
      ),
    );
    const { rows } = await sql<{ id: string }>`
      update call_sessions as s
         set status = v.status, updated_at = v.now, duration_seconds = coalesce(v.duration, s.duration_seconds)
        from (values ${values}) as v(id, status, from_statuses, duration, now)
       where s.id = v.id and s.status = any(v.from_statuses)
      returning s.id`.execute(this.db);
    return new Set(rows.map((r) => r.id));
  }

  /** Keeps a report unless one with the same id was kept before; true when it is new. */
  async insertProgress(row: CallProgressTable): Promise<boolean> {
    const result = await this.db
      .insertInto('call_progress')
      .values(row)
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /** Moves the session to `status` only from one of `from` (statuses before it), so each step happens once. */
  async advanceStatus(
    id: string,
    from: readonly string[],
    status: string,
    durationSeconds: number | null,
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('call_sessions')
      .set({ status, updated_at: now, ...(durationSeconds !== null ? { duration_seconds: durationSeconds } : {}) })
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The report that ended the call (its transcript goes into the call record). */
  lastProgress(sessionId: string, status: string): Promise<CallProgressTable | undefined> {
    return this.db
      .selectFrom('call_progress')
      .selectAll()
      .where('session_id', '=', sessionId)
      .where('status', '=', status)
      .orderBy('received_at', 'desc')
      .executeTakeFirst();
  }

  /** Marks the end of the call accounted for; true for the one caller that did it. */
  async markFinished(id: string, recordObjectId: string | null, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('call_sessions')
      .set({ finished_at: now, record_object_id: recordObjectId, updated_at: now })
      .where('id', '=', id)
      .where('finished_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Sessions that ended but whose end was not accounted for (the process stopped in between). */
  /** Sessions not ended whose last change is older than `before` (their audio server went quiet). */
  listStalled(finalStatuses: readonly string[], before: number, limit: number): Promise<CallSessionsTable[]> {
    return this.db
      .selectFrom('call_sessions')
      .selectAll()
      .where('status', 'not in', finalStatuses)
      .where('updated_at', '<', before)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  listEndedUnfinished(finalStatuses: readonly string[], limit: number): Promise<CallSessionsTable[]> {
    return this.db
      .selectFrom('call_sessions')
      .selectAll()
      .where('status', 'in', finalStatuses)
      .where('finished_at', 'is', null)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
  }

  // The voice agent's side of a session (migration 240 and after).

  /** The sealed assembled call, and when its media stream must have connected by (the media token's expiry). */
  async saveAssembled(sessionId: string, sealed: string, mediaDeadlineAt: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ assembled: sealed, media_deadline_at: mediaDeadlineAt })
      .where('id', '=', sessionId)
      .execute();
  }

  /** Sessions not ended whose stream never connected though its deadline passed before `before` (their token expired unused). */
  listUnconnected(
    finalStatuses: readonly string[],
    before: number,
    limit: number,
  ): Promise<Array<Pick<CallSessionsTable, 'id' | 'direction'>>> {
    return this.db
      .selectFrom('call_sessions')
      .select(['id', 'direction'])
      .where('media_deadline_at', '<', before)
      .where('media_instance', 'is', null)
      .where('status', 'not in', finalStatuses)
      .limit(limit)
      .execute();
  }

  /** What the carrier said a carried call lasted, kept for the case its instance died before reporting the end itself. */
  async setCarrierDuration(sessionId: string, seconds: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ carrier_duration_seconds: seconds })
      .where('id', '=', sessionId)
      .execute();
  }

  async markAnswered(sessionId: string, at: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ answered_at: at })
      .where('id', '=', sessionId)
      .where('answered_at', 'is', null)
      .execute();
  }

  async setAnsweredBy(sessionId: string, answeredBy: string): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ answered_by: answeredBy })
      .where('id', '=', sessionId)
      .where('answered_by', 'is', null)
      .execute();
  }

  /** Takes the session's media for `instance`; false when another connection has it already (one stream per call). */
  async claimMedia(sessionId: string, instance: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('call_sessions')
      .set({ media_instance: instance, media_heartbeat_at: now })
      .where('id', '=', sessionId)
      .where('media_instance', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** This instance still carries these calls (and still holds, in its sandbox carrier, the calls it placed that have not connected). */
  async heartbeat(
    instance: string,
    sessionIds: readonly string[],
    finalStatuses: readonly string[],
    now: number,
  ): Promise<void> {
    if (sessionIds.length > 0)
      await this.db
        .updateTable('call_sessions')
        .set({ media_heartbeat_at: now })
        .where('media_instance', '=', instance)
        .where('id', 'in', sessionIds)
        .execute();
    await this.db
      .updateTable('call_sessions')
      .set({ media_heartbeat_at: now })
      .where('carrier_instance', '=', instance)
      .where('media_instance', 'is', null)
      .where('status', 'not in', finalStatuses)
      .execute();
  }

  /** The call is held by this instance's in-process sandbox carrier until its stream connects (ringing there dies with it). */
  async setCarrierInstance(sessionId: string, instance: string, now: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ carrier_instance: instance, media_heartbeat_at: now })
      .where('id', '=', sessionId)
      .execute();
  }

  /**
   * Calls not ended whose instance (the one carrying their media, or holding
   * them in its sandbox carrier) has been silent since `staleBefore`: that
   * instance stopped. `otherThan`: every instance but this one (a SQLite
   * server at start: no other process can have the data folder).
   */
  listOrphaned(
    finalStatuses: readonly string[],
    staleBefore: number,
    limit: number,
    otherThan?: string,
  ): Promise<
    Array<Pick<CallSessionsTable, 'id' | 'user_id' | 'answered_at' | 'media_heartbeat_at' | 'carrier_duration_seconds'>>
  > {
    let query = this.db
      .selectFrom('call_sessions')
      .select(['id', 'user_id', 'answered_at', 'media_heartbeat_at', 'carrier_duration_seconds'])
      .where((eb) => eb.or([eb('media_instance', 'is not', null), eb('carrier_instance', 'is not', null)]))
      .where('status', 'not in', finalStatuses);
    query = otherThan
      ? query.where((eb) =>
          eb.and([
            eb.or([eb('media_instance', 'is', null), eb('media_instance', '!=', otherThan)]),
            eb.or([eb('carrier_instance', 'is', null), eb('carrier_instance', '!=', otherThan)]),
          ]),
        )
      : query.where('media_heartbeat_at', '<', staleBefore);
    return query.limit(limit).execute();
  }

  /** Sets why the call ended, once (the first final report's reason stands). */
  async setOutcome(sessionId: string, outcome: string, reason: string | null): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ outcome, reason })
      .where('id', '=', sessionId)
      .where('outcome', 'is', null)
      .execute();
  }

  /** The user's session opened for the carrier's call `callSid` since `since` (the sandbox carrier's inbound calls; the user's index bounds the search). */
  async findByProviderCall(userId: string, callSid: string, since: number): Promise<string | null> {
    const row = await this.db
      .selectFrom('call_sessions')
      .select('id')
      .where('user_id', '=', userId)
      .where('created_at', '>=', since)
      .where('provider_call_id', '=', callSid)
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /**
   * The user's calls from a browser that are set up or under way: not ended,
   * and either connected (a media instance carries them) or still able to
   * connect (created after `connectableSince`, when a token issued then is
   * still valid). A set-up call whose browser never came stops counting when
   * its token expires, whoever ends it.
   */
  async countLiveWeb(userId: string, finalStatuses: readonly string[], connectableSince: number): Promise<number> {
    const row = await this.db
      .selectFrom('call_sessions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .where('direction', '=', 'web')
      .where('status', 'not in', finalStatuses)
      .where((eb) => eb.or([eb('media_instance', 'is not', null), eb('created_at', '>', connectableSince)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The user's sessions, newest first, after the cursor (an id: ids are time-ordered UUIDv7). */
  listForUser(userId: string, before: string | null, limit: number): Promise<CallSessionsTable[]> {
    let query = this.db.selectFrom('call_sessions').selectAll().where('user_id', '=', userId);
    if (before) query = query.where('id', '<', before);
    return query.orderBy('id', 'desc').limit(limit).execute();
  }

  // Post-call analysis (migrations 510 and 540): its columns of the row, and the claim of one job at a time.

  async findForAnalysis(id: string): Promise<AnalysedSession | undefined> {
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
      tasks_written_at: orNull(row.tasks_written_at),
      analysis_status: row.analysis_status ?? null,
      analysis_job_id: row.analysis_job_id ?? null,
      finished_at: orNull(row.finished_at),
      answered_at: orNull(row.answered_at),
    };
  }

  /**
   * Takes the call's analysis for `jobId`, in one conditional update: a first
   * run only while the call is unanalysed and no other job holds it (two jobs
   * at the same instant: the database lets one update the row, the other
   * finds it taken), a re-run always (the latest asked for wins). False: the
   * job has nothing to write.
   */
  async claimAnalysis(id: string, jobId: string, rerun: boolean): Promise<boolean> {
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

  /** The call's `performance-metrics` record. */
  async setMetricsObject(id: string, objectId: string): Promise<void> {
    await this.db.updateTable('call_sessions').set({ metrics_object_id: objectId }).where('id', '=', id).execute();
  }

  /** The analysis's tasks were written (once: a re-run does not write them again). */
  async markTasksWritten(id: string, at: number): Promise<void> {
    await this.db.updateTable('call_sessions').set({ tasks_written_at: at }).where('id', '=', id).execute();
  }

  /**
   * Writes the row's analysis columns if `jobId` still holds the analysis (a
   * re-run asked for since has taken it over); call it on the store of the
   * transaction the `call_analysis` event is written in. False: nothing written.
   */
  async writeAnalysis(
    id: string,
    jobId: string,
    columns: Partial<AnalysisColumns> & Pick<AnalysisColumns, 'tally' | 'analysis_status'>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('call_sessions')
      .set(columns)
      .where('id', '=', id)
      .where('analysis_job_id', '=', jobId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
