// Billing: the credit ledger and its reservations, payment customers,
// subscriptions, checkout sessions, handled provider events and usage.
import type { Kysely } from 'kysely';
import { serialType } from '../columns.js';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('credit_ledger')
    .addColumn('id', serialType(dialect) as any, (c) =>
      dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
    )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('cents', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('credit_ledger_user').on('credit_ledger').columns(['user_id', 'id']).execute();

  await db.schema
    .createTable('credit_reservations')
    .addColumn('ref', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('cents', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('used_cents', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('credit_reservations_open')
    .on('credit_reservations')
    .columns(['state', 'created_at'])
    .execute();

  await db.schema
    .createTable('billing_customers')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'text', (c) => c.notNull())
    .addColumn('payment_method_id', 'text')
    .addColumn('card_brand', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('billing_customers_customer')
    .on('billing_customers')
    .columns(['provider', 'customer_id'])
    .execute();

  await db.schema
    .createTable('billing_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.unique())
    .addColumn('provider_subscription_id', 'text', (c) => c.notNull().unique())
    .addColumn('plan_key', 'text')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('monthly_cents', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('period_start', 'bigint')
    .addColumn('period_end', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('billing_subscriptions_user')
    .on('billing_subscriptions')
    .columns(['user_id', 'kind'])
    .execute();

  await db.schema
    .createTable('billing_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'bigint')
    .addColumn('plan_key', 'text')
    .addColumn('provider_session_id', 'text')
    .addColumn('return_to', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();

  await db.schema
    .createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('billing_usage')
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('billing_usage_pk', ['ref', 'kind'])
    .execute();
  await db.schema
    .createIndex('billing_usage_user')
    .on('billing_usage')
    .columns(['user_id', 'kind', 'recorded_at'])
    .execute();
}
