// SQL for password reset tokens (table password_resets) and for setting the
// new password.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import { noUserChangeListener, type UserChangeListener } from './credential-cache.js';
import { deleteUserKeys } from '../api-keys/store.js';
import { type UserRow, updateUser } from './store.js';
import type { PasswordResetsTable } from './tables.js';

export class PasswordResetStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changes: UserChangeListener = noUserChangeListener,
  ) {}

  async insert(row: PasswordResetsTable): Promise<void> {
    await this.db.insertInto('password_resets').values(row).execute();
  }

  findByHash(tokenHash: string) {
    return this.db.selectFrom('password_resets').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /**
   * In one transaction: uses the token (unused and unexpired at `now`), sets
   * the password hash, bumps token_version (every earlier session JWT stops
   * working), deletes every API key of the user (a reset is what an owner
   * does when a credential may be in someone else's hands) and deletes the
   * user's other reset tokens. Returns the updated
   * user, or null when the token was not usable (used meanwhile, expired).
   */
  async complete(tokenHash: string, passwordHash: string, now: number): Promise<UserRow | null> {
    const user = await this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('password_resets')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('user_id')
        .executeTakeFirst();
      if (!used) return null;
      await updateUser(trx, used.user_id, {
        password_hash: passwordHash,
        token_version: sql`token_version + 1`,
        updated_at: now,
      });
      await deleteUserKeys(trx, used.user_id);
      await trx
        .deleteFrom('password_resets')
        .where('user_id', '=', used.user_id)
        .where('token_hash', '!=', tokenHash)
        .execute();
      return (await trx.selectFrom('users').selectAll().where('id', '=', used.user_id).executeTakeFirst()) ?? null;
    });
    if (user) this.changes.userChanged(user.id);
    return user;
  }

  /** Removes reset tokens past their expiry, used or not. */
  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('password_resets').where('expires_at', '<=', now).execute();
  }
}
