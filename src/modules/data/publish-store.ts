// SQL for publications (an object published under a type and relatedId) and
// for the per-user root marker.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DataRootsTable, PublicationsTable } from './tables.js';

export class PublicationStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Publishes, replacing the object of an existing (type, relatedId) entry of the user. */
  async upsert(row: PublicationsTable): Promise<void> {
    await this.db
      .insertInto('publications')
      .values(row)
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'type', 'related_id'])
          .doUpdateSet({ object_id: row.object_id, published_at: row.published_at }),
      )
      .execute();
  }

  find(userId: string, type: string, relatedId: string) {
    return this.db
      .selectFrom('publications')
      .selectAll()
      .where('user_id', '=', userId)
      .where('type', '=', type)
      .where('related_id', '=', relatedId)
      .executeTakeFirst();
  }

  /** Removes an entry; returns it, or undefined when it was not published. */
  delete(userId: string, type: string, relatedId: string) {
    return this.db
      .deleteFrom('publications')
      .where('user_id', '=', userId)
      .where('type', '=', type)
      .where('related_id', '=', relatedId)
      .returning(['type', 'related_id', 'object_id'])
      .executeTakeFirst();
  }

  /** Removes every entry publishing this object; returns them. */
  deleteByObject(userId: string, objectId: string) {
    return this.db
      .deleteFrom('publications')
      .where('user_id', '=', userId)
      .where('object_id', '=', objectId)
      .returning(['type', 'related_id', 'object_id'])
      .execute();
  }
}

export class RootStore {
  constructor(private readonly db: Kysely<Database>) {}

  find(userId: string) {
    return this.db.selectFrom('data_roots').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Claims the user's root; false when another request already did. */
  async insertIfAbsent(row: DataRootsTable): Promise<boolean> {
    const result = await this.db
      .insertInto('data_roots')
      .values(row)
      .onConflict((oc) => oc.column('user_id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
