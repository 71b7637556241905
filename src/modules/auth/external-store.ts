// SQL for external sign-in: started flows (oauth_states), provider results
// waiting to be completed (external_pending) and linked identities.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { insertUser } from './store.js';
import type { ExternalIdentitiesTable, ExternalPendingTable, OauthStatesTable, UsersTable } from './tables.js';

export class ExternalIdentityStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insertState(row: OauthStatesTable): Promise<void> {
    await this.db.insertInto('oauth_states').values(row).execute();
  }

  /** Deletes and returns the flow of `state`, so a state is used once even when two callbacks race. */
  takeState(state: string) {
    return this.db.deleteFrom('oauth_states').where('state', '=', state).returningAll().executeTakeFirst();
  }

  async insertPending(row: ExternalPendingTable): Promise<void> {
    await this.db.insertInto('external_pending').values(row).execute();
  }

  /**
   * Marks an unused, unexpired pending result as used and returns it; undefined
   * when the token is unknown, used or expired. The conditional update makes
   * the token single-use under concurrency.
   */
  async consumePending(tokenHash: string, now: number): Promise<ExternalPendingTable | undefined> {
    const result = await this.db
      .updateTable('external_pending')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    return this.db.selectFrom('external_pending').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  findIdentity(provider: string, subject: string) {
    return this.db
      .selectFrom('external_identities')
      .selectAll()
      .where('provider', '=', provider)
      .where('subject', '=', subject)
      .executeTakeFirst();
  }

  /** Links an identity; false when (provider, subject) is already linked. */
  async insertIdentity(row: ExternalIdentitiesTable): Promise<boolean> {
    const result = await this.db
      .insertInto('external_identities')
      .values(row)
      .onConflict((oc) => oc.columns(['provider', 'subject']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * Creates a user and links the identity in one transaction; 'email_taken' or
   * 'identity_taken' (nothing written) when another request got there first.
   */
  createUserWithIdentity(
    user: UsersTable,
    identity: ExternalIdentitiesTable,
  ): Promise<'created' | 'email_taken' | 'identity_taken'> {
    return this.db
      .transaction()
      .execute(async (trx) => {
        if (!(await insertUser(trx, user))) return 'email_taken';
        const linked = await trx
          .insertInto('external_identities')
          .values(identity)
          .onConflict((oc) => oc.columns(['provider', 'subject']).doNothing())
          .executeTakeFirst();
        if (Number(linked.numInsertedOrUpdatedRows ?? 0) !== 1) throw new IdentityTaken();
        return 'created';
      })
      .catch((err: unknown) => {
        if (err instanceof IdentityTaken) return 'identity_taken' as const;
        throw err;
      });
  }

  /** Removes flows and pending results past their expiry (pending rows are kept until then, used or not). */
  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('oauth_states').where('expires_at', '<=', now).execute();
    await this.db.deleteFrom('external_pending').where('expires_at', '<=', now).execute();
  }
}

/** Thrown inside the transaction to roll the new user back. */
class IdentityTaken extends Error {}
