// SQL of temporary sessions and the leases of temporary numbers.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { TemporarySessionsTable } from './tables.js';

export class TemporarySessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Takes `number` for a new call when nobody holds it or its lease has
   * expired: one statement, so two instances never lease the same number.
   */
  async lease(number: string, userId: string, now: number, expiresAt: number): Promise<boolean> {
    const row = await this.db
      .insertInto('temporary_number_leases')
      .values({ number, user_id: userId, session_id: null, leased_at: now, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('number')
          .doUpdateSet({ user_id: userId, session_id: null, leased_at: now, expires_at: expiresAt })
          .where(sql<boolean>`temporary_number_leases.expires_at <= ${now}`),
      )
      .returning('number')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Numbers of the pool held by a lease still in force. */
  async leasedNumbers(now: number): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('temporary_number_leases')
      .select('number')
      .where('expires_at', '>', now)
      .execute();
    return new Set(rows.map((r) => r.number));
  }

  async attachSession(number: string, leasedAt: number, sessionId: string): Promise<void> {
    await this.db
      .updateTable('temporary_number_leases')
      .set({ session_id: sessionId })
      .where('number', '=', number)
      .where('leased_at', '=', leasedAt)
      .execute();
  }

  /** Gives the number back, if this lease (identified by when it was taken) still holds it. */
  async release(number: string, leasedAt: number): Promise<void> {
    await this.db
      .deleteFrom('temporary_number_leases')
      .where('number', '=', number)
      .where('leased_at', '=', leasedAt)
      .execute();
  }

  async releaseForSession(sessionId: string): Promise<void> {
    await this.db.deleteFrom('temporary_number_leases').where('session_id', '=', sessionId).execute();
  }

  async deleteExpiredLeases(now: number): Promise<void> {
    await this.db.deleteFrom('temporary_number_leases').where('expires_at', '<=', now).execute();
  }

  async insertSession(row: TemporarySessionsTable): Promise<void> {
    await this.db.insertInto('temporary_sessions').values(row).execute();
  }

  findSession(sessionId: string): Promise<TemporarySessionsTable | undefined> {
    return this.db.selectFrom('temporary_sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
  }

  /** Claims the summary email of a session; false when another process claimed it first. */
  async claimSummary(sessionId: string, now: number): Promise<boolean> {
    const row = await this.db
      .updateTable('temporary_sessions')
      .set({ summary_sent_at: now })
      .where('session_id', '=', sessionId)
      .where('summary_sent_at', 'is', null)
      .returning('session_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async unclaimSummary(sessionId: string): Promise<void> {
    await this.db
      .updateTable('temporary_sessions')
      .set({ summary_sent_at: null })
      .where('session_id', '=', sessionId)
      .execute();
  }

  /** Sessions whose call has ended but whose summary was not sent (the process stopped, or the mail provider failed). */
  listUnsentFinished(since: number, limit: number): Promise<TemporarySessionsTable[]> {
    return this.db
      .selectFrom('temporary_sessions as t')
      .innerJoin('call_sessions as c', 'c.id', 't.session_id')
      .selectAll('t')
      .where('t.summary_sent_at', 'is', null)
      .where('c.finished_at', 'is not', null)
      .where('t.created_at', '>', since)
      .limit(limit)
      .execute();
  }
}
