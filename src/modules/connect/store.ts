// SQL for connector jobs that hold lead credits.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ConnectJobsTable } from './tables.js';

export class ConnectJobStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ConnectJobsTable): Promise<void> {
    await this.db.insertInto('connect_jobs').values(row).execute();
  }

  /** Records how many leads a running job has delivered so far (and that it is alive). */
  async recordProgress(id: string, delivered: number, now: number): Promise<void> {
    await this.db.updateTable('connect_jobs').set({ delivered, updated_at: now }).where('id', '=', id).where('state', '=', 'running').execute();
  }

  /**
   * Moves a running job to settled and returns it as it was; undefined when it
   * is no longer running. Of the finishing request and start-up recovery (on
   * any instance) exactly one wins, and only the winner settles the credits.
   */
  async claimSettlement(id: string, now: number): Promise<ConnectJobsTable | undefined> {
    return this.db.updateTable('connect_jobs').set({ state: 'settled', updated_at: now }).where('id', '=', id).where('state', '=', 'running').returningAll().executeTakeFirst();
  }

  /** Running jobs not touched since `before` (their instance stopped). */
  listAbandoned(before: number): Promise<ConnectJobsTable[]> {
    return this.db.selectFrom('connect_jobs').selectAll().where('state', '=', 'running').where('updated_at', '<', before).orderBy('created_at').execute();
  }

  /** Free credits the user's running jobs still hold (granted from the allowance, usage not yet recorded). */
  async freeCreditsInFlight(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('connect_jobs')
      .select((eb) => eb.fn.sum<string | number | null>('free_credits').as('total'))
      .where('user_id', '=', userId)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }
}
