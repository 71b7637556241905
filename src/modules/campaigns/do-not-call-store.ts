// SQL of the account's do-not-call list.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DoNotCallTable } from './tables.js';

export class DoNotCallStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Lists the number (again: the first listing's reason and source stay). */
  async add(row: DoNotCallTable): Promise<void> {
    await this.db
      .insertInto('do_not_call')
      .values(row)
      .onConflict((oc) => oc.columns(['user_id', 'phone']).doNothing())
      .execute();
  }

  /** true when it was listed. */
  async remove(userId: string, phone: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('do_not_call')
      .where('user_id', '=', userId)
      .where('phone', '=', phone)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async find(userId: string, phone: string): Promise<DoNotCallTable | undefined> {
    return this.db
      .selectFrom('do_not_call')
      .selectAll()
      .where('user_id', '=', userId)
      .where('phone', '=', phone)
      .executeTakeFirst();
  }

  /** Which of `phones` are listed. */
  async listed(userId: string, phones: string[]): Promise<Set<string>> {
    if (phones.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('do_not_call')
      .select('phone')
      .where('user_id', '=', userId)
      .where('phone', 'in', phones)
      .execute();
    return new Set(rows.map((r) => r.phone));
  }

  /** In phone order, after `after`. */
  async list(userId: string, after: string | null, limit: number): Promise<DoNotCallTable[]> {
    let q = this.db.selectFrom('do_not_call').selectAll().where('user_id', '=', userId);
    if (after !== null) q = q.where('phone', '>', after);
    return q.orderBy('phone').limit(limit).execute();
  }
}
