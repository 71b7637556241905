// SQL of the single-use token ledger (migration 150).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SingleUseTokensTable } from './tables.js';

export class SingleUseStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the row; false when (purpose, id) was there already (one atomic statement). */
  async insertIfAbsent(row: SingleUseTokensTable): Promise<boolean> {
    const result = await this.db
      .insertInto('single_use_tokens')
      .values(row)
      .onConflict((oc) => oc.columns(['purpose', 'id']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async delete(purpose: string, id: string): Promise<void> {
    await this.db.deleteFrom('single_use_tokens').where('purpose', '=', purpose).where('id', '=', id).execute();
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('single_use_tokens').where('expires_at', '<', now).execute();
  }
}
