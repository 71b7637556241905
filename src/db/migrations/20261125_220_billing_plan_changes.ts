// Plan changes of a subscription, so a period's included quantities follow
// the plans in force over it (prorated as the provider prorates the price),
// and the URL of each opened checkout, so an open plan checkout is handed out
// again instead of a second one.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('billing_plan_changes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    /** billing_subscriptions.id */
    .addColumn('subscription_id', 'text', (c) => c.notNull())
    .addColumn('from_plan', 'text', (c) => c.notNull())
    .addColumn('to_plan', 'text', (c) => c.notNull())
    /** When the change took effect (epoch ms). */
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('billing_plan_changes_subscription')
    .on('billing_plan_changes')
    .columns(['subscription_id', 'at'])
    .execute();
  /** The page the customer was sent to (checkouts), handed out again while the session is open. */
  await db.schema.alterTable('billing_sessions').addColumn('url', 'text').execute();
  // One open plan checkout per user: older duplicates are closed first (the newest stays), then an index holds it.
  await sql`update billing_sessions set status = 'expired'
    where purpose = 'plan' and status = 'open' and exists (
      select 1 from billing_sessions b where b.user_id = billing_sessions.user_id and b.purpose = 'plan' and b.status = 'open'
        and (b.created_at > billing_sessions.created_at or (b.created_at = billing_sessions.created_at and b.id > billing_sessions.id)))`.execute(
    db,
  );
  await db.schema
    .createIndex('billing_sessions_one_open_plan')
    .on('billing_sessions')
    .column('user_id')
    .unique()
    .where(sql.ref('purpose'), '=', 'plan')
    .where(sql.ref('status'), '=', 'open')
    .execute();
}
