// SQL for the service's key pairs, registered servers and store keys.
import type { Kysely } from 'kysely';
import { prepareQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import type { ServersTable, ServiceKeysTable, StoreKeysTable } from './tables.js';

export class ServiceKeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The key pair with the highest generation. */
  current() {
    return this.db.selectFrom('service_keys').selectAll().orderBy('generation', 'desc').limit(1).executeTakeFirst();
  }

  findByName(name: string) {
    return this.db.selectFrom('service_keys').selectAll().where('name', '=', name).executeTakeFirst();
  }

  list() {
    return this.db.selectFrom('service_keys').selectAll().orderBy('generation', 'asc').execute();
  }

  /** Inserts a key pair unless its name or generation exists (another instance won); false then. */
  async insertIfAbsent(row: ServiceKeysTable): Promise<boolean> {
    const result = await this.db
      .insertInto('service_keys')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}

export class ServerStore {
  constructor(private readonly db: Kysely<Database>) {}

  listByUser(userId: string) {
    return this.db
      .selectFrom('servers')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  findByName(userId: string, name: string) {
    return this.db
      .selectFrom('servers')
      .selectAll()
      .where('user_id', '=', userId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** Inserts a server; false when the user already has one with this name. */
  async insert(row: ServersTable): Promise<boolean> {
    const result = await this.db
      .insertInto('servers')
      .values(row)
      .onConflict((oc) => oc.columns(['user_id', 'name']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}

const keyOfUser = prepareQuery((db, p) =>
  db.selectFrom('store_keys').select('id').where('id', '=', p(0)).where('user_id', '=', p(1)),
);

export class KeyStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: StoreKeysTable[]): Promise<void> {
    if (rows.length) await this.db.insertInto('store_keys').values(rows).execute();
  }

  find(userId: string, id: string) {
    return this.db
      .selectFrom('store_keys')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async exists(userId: string, id: string): Promise<boolean> {
    return (await keyOfUser.rows(this.db, [id, userId])).length > 0;
  }

  /** Deletes a key of the user; false when no such key is theirs. */
  async delete(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('store_keys')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
