// SQL of the durable job queue (jobs.ts). A job is claimed by one conditional
// UPDATE, so two instances never run it at once; while it runs its `run_at`
// is the end of its lease, so a job whose instance died is due again then.
// Every write after the claim holds only while the claim does (`attempts`).
import { type Kysely, sql } from 'kysely';
import { claimDueRows } from '../../db/claim.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { JobsTable } from './tables.js';

const numeric = (r: JobsTable): JobsTable => ({
  ...r,
  run_at: Number(r.run_at),
  attempts: Number(r.attempts),
  max_attempts: Number(r.max_attempts),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

export class JobStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** Inserts jobs through `db`: pass the transaction of the change that asks for them. */
  static async insert(db: Kysely<Database>, rows: JobsTable[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 200)
      await db
        .insertInto('jobs')
        .values(rows.slice(i, i + 200))
        .execute();
  }

  /**
   * Claims up to `limit` jobs of `kind` due at `now`: pending ones whose time
   * came, and running ones whose lease ended (their instance stopped). They
   * become running with a lease to `leaseUntil` and one more attempt, in one
   * statement (claimDueRows). Never more than `limit` (a kind's concurrency holds).
   */
  async claimDue(kind: string, now: number, leaseUntil: number, limit: number): Promise<JobsTable[]> {
    const rows = await claimDueRows<JobsTable>(this.db, this.dialect, {
      table: 'jobs',
      due: sql`kind = ${kind} and status in ('pending', 'running') and run_at <= ${now}`,
      orderBy: 'run_at',
      limit,
      set: sql`status = 'running', run_at = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}`,
    });
    return rows.map(numeric);
  }

  /** Moves a running job's lease on; false when its claim no longer holds (another instance took it). */
  async extendLease(id: string, attempts: number, leaseUntil: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set({ run_at: leaseUntil, updated_at: now })
      .where('id', '=', id)
      .where('attempts', '=', attempts)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Ends a claimed job: done, failed for good, or pending again at `runAt`; only while the claim holds. */
  async settle(
    id: string,
    attempts: number,
    outcome: { status: 'done' | 'failed' | 'pending'; runAt?: number; error?: string | null },
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('jobs')
      .set({
        status: outcome.status,
        ...(outcome.runAt !== undefined ? { run_at: outcome.runAt } : {}),
        last_error: outcome.error ?? null,
        updated_at: now,
      })
      .where('id', '=', id)
      .where('attempts', '=', attempts)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  find(id: string): Promise<JobsTable | undefined> {
    return this.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()
      .then((r) => (r ? numeric(r) : undefined));
  }

  /** Deletes jobs that ended (done or failed) before `before`. */
  async purgeEnded(before: number): Promise<void> {
    await this.db
      .deleteFrom('jobs')
      .where('status', 'in', ['done', 'failed'])
      .where('updated_at', '<', before)
      .execute();
  }
}
