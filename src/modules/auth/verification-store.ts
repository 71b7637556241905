// SQL for phone verification codes (table phone_codes) and for marking a
// user's phone verified.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noUserChangeListener, type UserChangeListener } from './credential-cache.js';
import { updateUser } from './store.js';
import type { PhoneCodesTable } from './tables.js';

export type PhoneCodeRow = PhoneCodesTable;

export class PhoneCodeStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changes: UserChangeListener = noUserChangeListener,
  ) {}

  /** Stores a new code and deletes every earlier code of the user: a new request supersedes them. */
  async replace(row: PhoneCodeRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('phone_codes').where('user_id', '=', row.user_id).execute();
      await trx.insertInto('phone_codes').values(row).execute();
    });
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('phone_codes').where('id', '=', id).execute();
  }

  /** The user's current code (the newest one not yet used), if any. */
  findCurrent(userId: string) {
    return this.db
      .selectFrom('phone_codes')
      .selectAll()
      .where('user_id', '=', userId)
      .where('consumed_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /**
   * Counts one try against the code before it is compared, so parallel
   * guesses cannot exceed `maxAttempts`. False when no try is left (or the
   * code was used meanwhile).
   */
  async claimAttempt(id: string, maxAttempts: number): Promise<boolean> {
    const result = await this.db
      .updateTable('phone_codes')
      .set({ attempts: sql`attempts + 1` })
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .where('attempts', '<', maxAttempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Uses the code and marks its phone verified on the user, in one
   * transaction. False when the code was used or superseded meanwhile.
   */
  async consumeAndVerify(code: PhoneCodeRow, now: number): Promise<boolean> {
    const verified = await this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('phone_codes')
        .set({ consumed_at: now })
        .where('id', '=', code.id)
        .where('consumed_at', 'is', null)
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1) return false;
      await updateUser(trx, code.user_id, { phone: code.phone, phone_verified: 1, updated_at: now });
      return true;
    });
    if (verified) this.changes.userChanged(code.user_id);
    return verified;
  }

  /** Removes codes past their expiry, used or not. */
  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('phone_codes').where('expires_at', '<=', now).execute();
  }
}
