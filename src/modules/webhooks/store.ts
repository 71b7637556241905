// SQL of outbound webhooks: secrets and the delivery queue.
import { type Kysely, sql } from 'kysely';
import { Batcher } from '../../db/batcher.js';
import { claimDueRows } from '../../db/claim.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { WebhookDeliveriesTable, WebhookSecretsTable } from './tables.js';

type AttemptOutcome = {
  status: WebhookDeliveriesTable['status'];
  nextAttemptAt: number;
  statusCode: number | null;
  error: string | null;
  now: number;
};

export class WebhookStore {
  /**
   * PostgreSQL: attempt outcomes that end in the same event-loop turn are
   * written by one statement (a burst of deliveries otherwise costs a round
   * trip each); SQLite writes each at once.
   */
  private readonly outcomes: Batcher<{ id: string; attempts: number; outcome: AttemptOutcome }, void> | null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {
    this.outcomes =
      dialect === 'postgres'
        ? Batcher.forWrites((items: Array<{ id: string; attempts: number; outcome: AttemptOutcome }>) =>
            this.finishAttempts(items),
          )
        : null;
  }

  /** Deliveries still waiting for a (first or next) attempt, across every instance. */
  async pendingCount(): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Several users' secrets in one read. */
  findSecrets(userIds: readonly string[]): Promise<WebhookSecretsTable[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('webhook_secrets').selectAll().where('user_id', 'in', userIds).execute();
  }

  findSecret(userId: string): Promise<WebhookSecretsTable | undefined> {
    return this.db.selectFrom('webhook_secrets').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Inserts the user's first secret unless one exists (two first requests race: one wins, both read it back). */
  async insertSecretIfMissing(row: WebhookSecretsTable): Promise<void> {
    await this.db
      .insertInto('webhook_secrets')
      .values(row)
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
  }

  /** Replaces the secret only if it is still `expected` (a concurrent rotation wins once); true when replaced. */
  async rotateSecret(userId: string, expected: string, next: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_secrets')
      .set({ secret: next, previous_secret: expected, rotated_at: now })
      .where('user_id', '=', userId)
      .where('secret', '=', expected)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Inserts deliveries through `db`: pass the transaction of the change they report. */
  static async insertDeliveries(db: Kysely<Database>, rows: WebhookDeliveriesTable[]): Promise<void> {
    if (rows.length) await db.insertInto('webhook_deliveries').values(rows).execute();
  }

  /**
   * Claims up to `limit` deliveries due at `now` for one attempt each: their
   * due time moves to `leaseUntil` and their attempt count goes up, in one
   * statement (claimDueRows), so two workers (instances) never claim the same
   * delivery. A worker that dies mid-attempt leaves the delivery due again
   * when the lease ends.
   */
  async claimDue(now: number, leaseUntil: number, limit: number): Promise<WebhookDeliveriesTable[]> {
    const rows = await claimDueRows<WebhookDeliveriesTable>(this.db, this.dialect, {
      table: 'webhook_deliveries',
      due: sql`status = 'pending' and next_attempt_at <= ${now}`,
      orderBy: 'next_attempt_at',
      limit,
      set: sql`next_attempt_at = ${leaseUntil}, attempts = attempts + 1, updated_at = ${now}`,
    });
    return rows.map((r) => ({
      ...r,
      attempts: Number(r.attempts),
      next_attempt_at: Number(r.next_attempt_at),
      created_at: Number(r.created_at),
    }));
  }

  /** Records an attempt's outcome, only while this worker's claim (`attempts`) still holds. */
  async finishAttempt(id: string, attempts: number, outcome: AttemptOutcome): Promise<void> {
    if (this.outcomes) return this.outcomes.run({ id, attempts, outcome });
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        status: outcome.status,
        next_attempt_at: outcome.nextAttemptAt,
        last_status_code: outcome.statusCode,
        last_error: outcome.error,
        updated_at: outcome.now,
      })
      .where('id', '=', id)
      .where('attempts', '=', attempts)
      .where('status', '=', 'pending')
      .execute();
  }

  /** PostgreSQL: finishAttempt for many deliveries in one statement, each only while its claim still holds. */
  private async finishAttempts(items: Array<{ id: string; attempts: number; outcome: AttemptOutcome }>): Promise<void> {
    const values = sql.join(
      items.map(
        ({ id, attempts, outcome: o }) =>
          sql`(${id}::text, ${attempts}::integer, ${o.status}::text, ${o.nextAttemptAt}::bigint, ${o.statusCode}::integer, ${o.error}::text, ${o.now}::bigint)`,
      ),
    );
    await sql`
      update webhook_deliveries as d
         set status = v.status, next_attempt_at = v.next_attempt_at, last_status_code = v.status_code, last_error = v.error, updated_at = v.now
        from (values ${values}) as v(id, attempts, status, next_attempt_at, status_code, error, now)
       where d.id = v.id and d.attempts = v.attempts and d.status = 'pending'`.execute(this.db);
  }

  find(id: string): Promise<WebhookDeliveriesTable | undefined> {
    return this.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listForUser(userId: string, limit: number): Promise<WebhookDeliveriesTable[]> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
}
