// Billing SQL: the ledger, reservations, customers, subscriptions, sessions,
// handled events and usage. The ledger is append-only: rows are inserted with
// ON CONFLICT (ref) DO NOTHING, so a duplicate changes nothing on either
// database, even when two instances write at the same moment.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type {
  BillingPlanChangesTable,
  BillingCustomersTable,
  BillingSessionsTable,
  BillingSubscriptionsTable,
  CreditReservationsTable,
} from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

const total = sql<number>`cast(coalesce(sum(cents), 0) as bigint)`;

/** Hears about ledger writes (metrics); shared by a store and the stores bound to its transactions. */
export interface BillingStoreHooks {
  ledgerWrite: () => void;
}

export class BillingStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    readonly hooks: BillingStoreHooks = { ledgerWrite: () => {} },
  ) {}

  /**
   * Runs `work` in one transaction with a store bound to it. On SQLite the
   * transaction takes the write lock up front (BEGIN IMMEDIATE): a deferred one
   * that read first could not upgrade while another process sharing the file
   * wrote, and would fail with SQLITE_BUSY instead of waiting its turn.
   */
  transaction<T>(work: (store: BillingStore) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres')
      return this.db.transaction().execute((trx) => work(new BillingStore(trx, this.dialect, this.hooks)));
    return this.db.connection().execute(async (conn) => {
      await sql.raw('begin immediate').execute(conn);
      try {
        const result = await work(new BillingStore(conn, this.dialect, this.hooks));
        await sql.raw('commit').execute(conn);
        return result;
      } catch (error) {
        await sql.raw('rollback').execute(conn);
        throw error;
      }
    });
  }

  /**
   * PostgreSQL: serializes this user's balance checks until the transaction
   * ends (two holds must not both see the same balance). SQLite writers are
   * serialized already, and the hold's first statement is a write.
   */
  async lockUser(userId: string): Promise<void> {
    await lockForTransaction(this.db, this.dialect, `billing:${userId}`);
  }

  // ---- ledger

  async balance(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('credit_ledger')
      .select(total.as('cents'))
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(row?.cents ?? 0);
  }

  /** Appends an entry unless its ref exists; true when it was appended. */
  async append(entry: { userId: string; cents: number; reason: string; ref: string; now: number }): Promise<boolean> {
    const result = await this.db
      .insertInto('credit_ledger')
      .values({
        user_id: entry.userId,
        cents: entry.cents,
        reason: entry.reason,
        ref: entry.ref,
        created_at: entry.now,
      })
      .onConflict((oc) => oc.column('ref').doNothing())
      .executeTakeFirst();
    const appended = Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    if (appended) this.hooks.ledgerWrite();
    return appended;
  }

  /** Appends a debit of `cents` only when the balance covers it (one statement); true when appended. */
  async appendCovered(entry: {
    userId: string;
    cents: number;
    reason: string;
    ref: string;
    now: number;
  }): Promise<boolean> {
    const result = await sql`
      insert into credit_ledger (user_id, cents, reason, ref, created_at)
      select ${entry.userId}, cast(${-entry.cents} as bigint), ${entry.reason}, ${entry.ref}, cast(${entry.now} as bigint)
      where (select coalesce(sum(cents), 0) from credit_ledger where user_id = ${entry.userId}) >= ${entry.cents}
      on conflict (ref) do nothing`.execute(this.db);
    const appended = Number(result.numAffectedRows ?? 0n) === 1;
    if (appended) this.hooks.ledgerWrite();
    return appended;
  }

  entry(ref: string) {
    return this.db.selectFrom('credit_ledger').selectAll().where('ref', '=', ref).executeTakeFirst();
  }

  listEntries(userId: string, limit: number) {
    return this.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  // ---- reservations

  async insertReservation(row: CreditReservationsTable): Promise<void> {
    await this.db
      .insertInto('credit_reservations')
      .values(row)
      .onConflict((oc) => oc.column('ref').doNothing())
      .execute();
  }

  reservation(ref: string) {
    return this.db.selectFrom('credit_reservations').selectAll().where('ref', '=', ref).executeTakeFirst();
  }

  /** Closes a held reservation (at most once); the row when this call closed it. */
  closeReservation(ref: string, state: 'settled' | 'refunded', usedCents: number, now: number) {
    return this.db
      .updateTable('credit_reservations')
      .set({ state, used_cents: usedCents, closed_at: now })
      .where('ref', '=', ref)
      .where('state', '=', 'held')
      .where('cents', '>=', usedCents)
      .returning(['ref', 'user_id', 'cents'])
      .executeTakeFirst();
  }

  async heldBefore(before: number, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('credit_reservations')
      .select('ref')
      .where('state', '=', 'held')
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.ref);
  }

  // ---- customers

  customer(userId: string) {
    return this.db.selectFrom('billing_customers').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  async insertCustomer(row: BillingCustomersTable): Promise<void> {
    await this.db
      .insertInto('billing_customers')
      .values(row)
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
  }

  async replaceCustomer(row: BillingCustomersTable): Promise<void> {
    const { user_id, created_at: _created, ...rest } = row;
    await this.db.updateTable('billing_customers').set(rest).where('user_id', '=', user_id).execute();
  }

  /** Forgets the card on file when it is this payment method; the user whose card it was, or null. */
  async removeCard(provider: string, customerId: string, paymentMethodId: string, now: number): Promise<string | null> {
    const row = await this.db
      .updateTable('billing_customers')
      .set({ payment_method_id: null, card_brand: null, card_last4: null, updated_at: now })
      .where('provider', '=', provider)
      .where('customer_id', '=', customerId)
      .where('payment_method_id', '=', paymentMethodId)
      .returning('user_id')
      .executeTakeFirst();
    return row?.user_id ?? null;
  }

  async setCard(
    userId: string,
    card: { id: string; brand: string | null; last4: string | null },
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('billing_customers')
      .set({ payment_method_id: card.id, card_brand: card.brand, card_last4: card.last4, updated_at: now })
      .where('user_id', '=', userId)
      .execute();
  }

  // ---- subscriptions

  subscription(id: string) {
    return this.db.selectFrom('billing_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  subscriptionByRef(ref: string) {
    return this.db.selectFrom('billing_subscriptions').selectAll().where('ref', '=', ref).executeTakeFirst();
  }

  subscriptionByProviderId(providerId: string) {
    return this.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('provider_subscription_id', '=', providerId)
      .executeTakeFirst();
  }

  /** The user's newest plan subscription that is not canceled. */
  livePlan(userId: string) {
    return this.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('kind', '=', 'plan')
      .where('status', 'not in', ['canceled', 'incomplete_expired'])
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
  }

  /** Inserts unless the provider id or ref exists; true when inserted. */
  async insertSubscription(row: BillingSubscriptionsTable): Promise<boolean> {
    const result = await this.db
      .insertInto('billing_subscriptions')
      .values(row)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  async insertPlanChange(row: BillingPlanChangesTable): Promise<void> {
    await this.db.insertInto('billing_plan_changes').values(row).execute();
  }

  /** Plan changes of a subscription after `since`, oldest first. */
  planChanges(subscriptionId: string, since: number) {
    return this.db
      .selectFrom('billing_plan_changes')
      .selectAll()
      .where('subscription_id', '=', subscriptionId)
      .where('at', '>', since)
      .orderBy('at')
      .orderBy('id')
      .execute();
  }

  async updateSubscription(
    id: string,
    changes: Partial<
      Pick<
        BillingSubscriptionsTable,
        'status' | 'plan_key' | 'monthly_cents' | 'description' | 'period_start' | 'period_end' | 'updated_at'
      >
    >,
  ): Promise<void> {
    await this.db.updateTable('billing_subscriptions').set(changes).where('id', '=', id).execute();
  }

  // ---- sessions

  async insertSession(row: BillingSessionsTable): Promise<void> {
    await this.db.insertInto('billing_sessions').values(row).execute();
  }

  session(id: string) {
    return this.db.selectFrom('billing_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async setProviderSession(id: string, providerSessionId: string, url?: string): Promise<void> {
    await this.db
      .updateTable('billing_sessions')
      .set({ provider_session_id: providerSessionId, ...(url === undefined ? {} : { url }) })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Inserts a session unless the user already has an open one of the same
   * purpose that must be unique (plan checkouts, by a partial unique index);
   * false then. Open sessions past their expiry are closed first.
   */
  async insertUniqueSession(row: BillingSessionsTable, now: number): Promise<boolean> {
    await this.db
      .updateTable('billing_sessions')
      .set({ status: 'expired' })
      .where('user_id', '=', row.user_id)
      .where('purpose', '=', row.purpose)
      .where('status', '=', 'open')
      .where('expires_at', '<=', now)
      .execute();
    try {
      await this.db.insertInto('billing_sessions').values(row).execute();
      return true;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') return false;
      throw err;
    }
  }

  /** The user's open session of `purpose` (not yet past its expiry), if any. */
  openSessionOf(userId: string, purpose: string, now: number) {
    return this.db
      .selectFrom('billing_sessions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('purpose', '=', purpose)
      .where('status', '=', 'open')
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /** Closes an open session that will not complete (its provider session could not be opened). */
  async failSession(id: string): Promise<void> {
    await this.db
      .updateTable('billing_sessions')
      .set({ status: 'failed' })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .execute();
  }

  async completeSession(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('billing_sessions')
      .set({ status: 'complete', completed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  // ---- provider events

  /** Records an event id; false when it was handled before (or is being handled by another transaction that then commits). */
  async markEvent(id: string, type: string, now: number): Promise<boolean> {
    const result = await this.db
      .insertInto('billing_events')
      .values({ id, type, received_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  // ---- usage

  async insertUsage(row: {
    ref: string;
    kind: string;
    userId: string;
    quantity: number;
    now: number;
  }): Promise<boolean> {
    const result = await this.db
      .insertInto('billing_usage')
      .values({ ref: row.ref, kind: row.kind, user_id: row.userId, quantity: row.quantity, recorded_at: row.now })
      .onConflict((oc) => oc.columns(['ref', 'kind']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** Usage per kind recorded in [start, end). */
  async usageTotals(userId: string, start: number, end: number): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('billing_usage')
      .select(['kind', sql<number>`cast(sum(quantity) as bigint)`.as('total')])
      .where('user_id', '=', userId)
      .where('recorded_at', '>=', start)
      .where('recorded_at', '<', end)
      .groupBy('kind')
      .execute();
    return new Map(rows.map((r) => [r.kind, Number(r.total)]));
  }
}
