import type { Kysely } from 'kysely';
import { prepareQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { ApiKeysTable } from './tables.js';
import { noUserChangeListener, type UserChangeListener } from '../auth/credential-cache.js';

const keyWithOwner = prepareQuery((db, p) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .selectAll('users')
    .select(['api_keys.id as key_id', 'api_keys.last_used_at as key_last_used_at'])
    .where('api_keys.key_hash', '=', p(0)),
);

/** Deletes every API key of a user through `db` (a password reset's transaction). */
export async function deleteUserKeys(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('api_keys').where('user_id', '=', userId).execute();
}

export class ApiKeyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly changes: UserChangeListener = noUserChangeListener,
  ) {}

  async insert(row: ApiKeysTable): Promise<void> {
    await this.db.insertInto('api_keys').values(row).execute();
  }

  listByUser(userId: string) {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  /** Deletes a key of the user; false when no such key is theirs. */
  async delete(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('api_keys')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    this.changes.userChanged(userId);
    return Number(result.numDeletedRows) === 1;
  }

  /** The key with this hash and its owner, in one query. */
  async findWithOwner(keyHash: string) {
    return (await keyWithOwner.rows(this.db, [keyHash]))[0];
  }

  /** The owner of the key with this id, when the key still exists (event tickets re-check the key that issued them). */
  async findOwnerById(id: string) {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .selectAll('users')
      .where('api_keys.id', '=', id)
      .executeTakeFirst();
  }

  async touch(id: string, now: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
  }
}
