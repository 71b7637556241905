// SQL for Idempotency-Key records. Claiming a key is one atomic statement, so
// two instances (or two requests on one) never both run the same request.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { IdempotencyKeysTable } from './tables.js';

export type IdempotencyRecord = IdempotencyKeysTable;

export class IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Claims (user, key) for a new request: inserts a running record, or takes
   * over one that expired or whose runner was abandoned (running since before
   * `staleBefore`). Returns true when this caller now owns the key.
   */
  async claim(row: {
    userId: string;
    key: string;
    fingerprint: string;
    now: number;
    expiresAt: number;
    staleBefore: number;
  }): Promise<boolean> {
    const values = {
      fingerprint: row.fingerprint,
      state: 'running' as const,
      status_code: null,
      content_type: null,
      body: null,
      headers: null,
      created_at: row.now,
      expires_at: row.expiresAt,
    };
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values({ user_id: row.userId, key: row.key, ...values })
      .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return true;
    const taken = await this.db
      .updateTable('idempotency_keys')
      .set(values)
      .where('user_id', '=', row.userId)
      .where('key', '=', row.key)
      .where((eb) =>
        eb.or([
          eb('expires_at', '<=', row.now),
          eb.and([eb('state', '=', 'running'), eb('created_at', '<', row.staleBefore)]),
        ]),
      )
      .returning('key')
      .executeTakeFirst();
    return taken !== undefined;
  }

  find(userId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  async complete(
    userId: string,
    key: string,
    answer: { statusCode: number; contentType: string | null; body: string; headers: Record<string, string> },
  ): Promise<void> {
    const headers = Object.keys(answer.headers).length > 0 ? JSON.stringify(answer.headers) : null;
    await this.db
      .updateTable('idempotency_keys')
      .set({
        state: 'done',
        status_code: answer.statusCode,
        content_type: answer.contentType,
        body: answer.body,
        headers,
      })
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute();
  }

  /** Forgets a running record (its request failed on our side), so a retry runs again. */
  async release(userId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('user_id', '=', userId)
      .where('key', '=', key)
      .where('state', '=', 'running')
      .execute();
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
  }
}
