// SQL for TOTP two-factor authentication: the 2FA columns of `users` and the
// `recovery_codes` table. Writes that must not race are conditional updates.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noUserChangeListener, type UserChangeListener } from './credential-cache.js';
import { updateUser } from './store.js';
import type { RecoveryCodesTable } from './tables.js';

export interface TwoFactorUser {
  id: string;
  email: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  two_factor_enabled: number;
  totp_last_step: number | null;
}

export class TwoFactorStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changes: UserChangeListener = noUserChangeListener,
  ) {}

  findUser(userId: string): Promise<TwoFactorUser | undefined> {
    return this.db
      .selectFrom('users')
      .select(['id', 'email', 'totp_secret', 'totp_pending_secret', 'two_factor_enabled', 'totp_last_step'])
      .where('id', '=', userId)
      .executeTakeFirst();
  }

  async setPendingSecret(userId: string, sealed: string, now: number): Promise<void> {
    await updateUser(this.db, userId, { totp_pending_secret: sealed, updated_at: now });
  }

  /**
   * Records `step` as the last accepted TOTP step, only if it is later than
   * the one stored: false means another request accepted this step (or a
   * later one) first, so the code is a replay.
   */
  async advanceLastStep(userId: string, step: number): Promise<boolean> {
    return updateUser(this.db, userId, { totp_last_step: step }, (eb) =>
      eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]),
    );
  }

  /**
   * Makes the pending secret the active one and replaces the recovery codes,
   * in one transaction. Only succeeds while the pending secret is still the
   * one the caller checked the code against (false otherwise: a concurrent
   * confirmation or a newer enable/request won).
   */
  async confirmPendingSecret(
    userId: string,
    pendingSealed: string,
    lastStep: number,
    codes: RecoveryCodesTable[],
    now: number,
  ): Promise<boolean> {
    const confirmed = await this.db.transaction().execute(async (trx) => {
      const updated = await updateUser(
        trx,
        userId,
        {
          totp_secret: pendingSealed,
          totp_pending_secret: null,
          two_factor_enabled: 1,
          totp_last_step: lastStep,
          updated_at: now,
        },
        (eb) => eb('totp_pending_secret', '=', pendingSealed),
      );
      if (!updated) return false;
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx.insertInto('recovery_codes').values(codes).execute();
      return true;
    });
    if (confirmed) this.changes.userChanged(userId);
    return confirmed;
  }

  listUnusedRecoveryCodes(userId: string) {
    return this.db
      .selectFrom('recovery_codes')
      .select(['id', 'code_hash'])
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .execute();
  }

  /** Marks a recovery code used; false when it was used meanwhile. */
  async useRecoveryCode(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('recovery_codes')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
