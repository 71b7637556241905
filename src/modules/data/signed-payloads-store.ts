// SQL of the single-use jti ledger of signed payloads.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SignedPayloadUsesTable } from './tables.js';

export class SignedPayloadUseStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records a jti; false when this server's jti was recorded before (by any request or instance). */
  async insertIfAbsent(row: SignedPayloadUsesTable): Promise<boolean> {
    const result = await this.db
      .insertInto('signed_payload_uses')
      .values(row)
      .onConflict((oc) => oc.columns(['user_id', 'server', 'jti']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('signed_payload_uses').where('expires_at', '<', now).execute();
  }
}
