// SQL of the integrations table.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { IntegrationsTable } from './tables.js';

export class IntegrationStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: IntegrationsTable): Promise<void> {
    await this.db.insertInto('integrations').values(row).execute();
  }

  listByUser(userId: string) {
    return this.db
      .selectFrom('integrations')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  findById(userId: string, id: string) {
    return this.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** Deletes an integration of the user; false when no such integration is theirs. */
  async delete(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('integrations')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
