// SQL for the cross-cutting tables: rate-limit counters, audit log, sandbox outbox.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SandboxOutboxTable } from './tables.js';

export class PlatformStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Counts one hit in the fixed window of `key` and returns the count and the
   * window's start; a window older than `windowMs` restarts at `now`. One
   * atomic upsert, so every instance sharing the database sees the same count.
   */
  async hitRateLimit(
    key: string,
    now: number,
    windowMs: number,
    amount = 1,
  ): Promise<{ count: number; windowStart: number }> {
    const expired = now - windowMs;
    const row = await this.db
      .insertInto('rate_limits')
      .values({ key, window_start: now, count: amount })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql`case when rate_limits.window_start <= ${expired} then ${amount} else rate_limits.count + ${amount} end`,
          window_start: sql`case when rate_limits.window_start <= ${expired} then ${now} else rate_limits.window_start end`,
        }),
      )
      .returning(['count', 'window_start'])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), windowStart: Number(row.window_start) };
  }

  /** Takes back `amount` counted on `key` in its current window (a refused quota request). */
  async unhitRateLimit(key: string, windowStart: number, amount: number): Promise<void> {
    await this.db
      .updateTable('rate_limits')
      .set({ count: sql`count - ${amount}` })
      .where('key', '=', key)
      .where('window_start', '=', windowStart)
      .execute();
  }

  async deleteStaleRateLimits(before: number): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('window_start', '<', before).execute();
  }

  async insertAudit(entry: {
    userId: string | null;
    action: string;
    success: boolean;
    ip: string | null;
    userAgent: string | null;
    detail: Record<string, unknown> | null;
    createdAt: number;
  }): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        user_id: entry.userId,
        action: entry.action,
        success: entry.success ? 1 : 0,
        ip: entry.ip,
        user_agent: entry.userAgent,
        detail: entry.detail ? JSON.stringify(entry.detail) : null,
        created_at: entry.createdAt,
      })
      .execute();
  }

  listAudit(userId: string, limit = 100) {
    return this.db
      .selectFrom('audit_log')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  async insertOutbox(row: SandboxOutboxTable): Promise<void> {
    await this.db.insertInto('sandbox_outbox').values(row).execute();
  }

  listOutbox(recipient: string | null, limit: number) {
    let q = this.db
      .selectFrom('sandbox_outbox')
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    if (recipient) q = q.where('recipient', '=', recipient);
    return q.execute();
  }

  /** Stores `value` under `name` unless a value is there already; answers the stored value (the first writer's, when instances start together). */
  async claimSetting(name: string, value: string, now: number): Promise<string> {
    await this.db
      .insertInto('server_settings')
      .values({ name, value, updated_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.db
      .selectFrom('server_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return row.value;
  }

  async readSetting(name: string): Promise<string | null> {
    const row = await this.db.selectFrom('server_settings').select('value').where('name', '=', name).executeTakeFirst();
    return row?.value ?? null;
  }

  async replaceSetting(name: string, value: string, now: number): Promise<void> {
    await this.db.updateTable('server_settings').set({ value, updated_at: now }).where('name', '=', name).execute();
  }
}
