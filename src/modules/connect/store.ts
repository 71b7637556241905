// SQL for connector jobs that hold lead credits.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { ConnectJobsTable } from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

export class ConnectJobStore {
  /** SQLite (one instance): the tail of each user's queue of grants. */
  private readonly userQueues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Runs `work` while no other grant of the same user runs, with a store whose
   * writes commit when `work` ends: so the next grant sees this one's job (and
   * its free credits). PostgreSQL: a transaction holding a per-user advisory
   * lock (every instance); SQLite: a per-user queue in this process.
   */
  async serializedForUser<T>(userId: string, work: (store: ConnectJobStore) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres') {
      return this.db.transaction().execute(async (trx) => {
        await lockForTransaction(trx, this.dialect, `connect-grant:${userId}`);
        return work(new ConnectJobStore(trx, this.dialect));
      });
    }
    const previous = this.userQueues.get(userId) ?? Promise.resolve();
    const run = previous.then(
      () => work(this),
      () => work(this),
    );
    const tail = run.catch(() => {});
    this.userQueues.set(userId, tail);
    void tail.then(() => {
      if (this.userQueues.get(userId) === tail) this.userQueues.delete(userId);
    });
    return run;
  }

  async insert(row: ConnectJobsTable): Promise<void> {
    await this.db.insertInto('connect_jobs').values(row).execute();
  }

  /**
   * Records how many leads a running job has delivered so far and stamps its
   * heartbeat. False when the job is no longer running (recovery settled it):
   * its stream must stop.
   */
  async recordProgress(id: string, delivered: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('connect_jobs')
      .set({ delivered, updated_at: now })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Stamps a running job's heartbeat (`updated_at`). False when it is no longer running. */
  async beat(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('connect_jobs')
      .set({ updated_at: now })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Moves a running job to settling with its final delivered count (null: the
   * count it last recorded) and returns it; undefined when it is no longer
   * running. Of the finishing request and start-up recovery (on any instance)
   * exactly one wins, and only the winner charges.
   */
  async claimSettlement(id: string, delivered: number | null, now: number): Promise<ConnectJobsTable | undefined> {
    return this.db
      .updateTable('connect_jobs')
      .set((eb) => ({ state: 'settling', delivered: delivered ?? eb.ref('delivered'), updated_at: now }))
      .where('id', '=', id)
      .where('state', '=', 'running')
      .returningAll()
      .executeTakeFirst();
  }

  /** A job still settling (its charge may not have reached billing), or undefined. */
  findSettling(id: string): Promise<ConnectJobsTable | undefined> {
    return this.db
      .selectFrom('connect_jobs')
      .selectAll()
      .where('id', '=', id)
      .where('state', '=', 'settling')
      .executeTakeFirst();
  }

  /** Marks a job settled (from running or settling): billing has what it owes. */
  async markSettled(id: string, now: number): Promise<void> {
    await this.db
      .updateTable('connect_jobs')
      .set({ state: 'settled', updated_at: now })
      .where('id', '=', id)
      .where('state', '!=', 'settled')
      .execute();
  }

  /** Jobs whose heartbeat (`updated_at`) is older than `before` that are still running (their instance stopped) or settling (their charge failed). */
  listAbandoned(before: number): Promise<ConnectJobsTable[]> {
    return this.db
      .selectFrom('connect_jobs')
      .selectAll()
      .where('state', 'in', ['running', 'settling'])
      .where('updated_at', '<', before)
      .orderBy('created_at')
      .execute();
  }

  /** Free credits the user's running jobs still hold (granted from the allowance, usage not yet recorded). */
  async freeCreditsInFlight(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('connect_jobs')
      .select((eb) => eb.fn.sum<string | number | null>('free_credits').as('total'))
      .where('user_id', '=', userId)
      .where('state', 'in', ['running', 'settling'])
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }
}
