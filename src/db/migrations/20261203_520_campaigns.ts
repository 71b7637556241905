// Campaigns (DESIGN.md "Campaigns"): the campaign, its contacts and their
// attempts as rows, so that the dialer's state survives a restart and every
// instance dials from the same rows (a contact is claimed by one instance at
// a time; pacing and the concurrency cap are decided on the campaign's row);
// the account's do-not-call list; and the campaign of a call session.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    /** draft | running | paused | completed | cancelled. */
    .addColumn('status', 'text', (c) => c.notNull())
    /** Why it paused or ended by itself: insufficient_funds, budget_reached, schedule_ended. */
    .addColumn('reason', 'text')
    /** The definition as the dialer needs it (agent, pathway, schedule, retry, voicemail), sealed with the master key. */
    .addColumn('definition', 'text', (c) => c.notNull())
    /** The copy in the owner's `campaigns` store. */
    .addColumn('object_id', 'text')
    .addColumn('calls_per_minute', 'integer', (c) => c.notNull())
    .addColumn('max_concurrent', 'integer', (c) => c.notNull())
    /** The next pacing slot: a dial may start at or after it; each dial moves it 60000 / calls_per_minute later. */
    .addColumn('next_dial_at', 'bigint', (c) => c.notNull())
    .addColumn('budget_cents', 'bigint')
    .addColumn('spent_cents', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_url', 'text')
    /** When a contact or the status last changed, and when the last campaign_status event went out (at most one a second). */
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addColumn('status_event_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('ended_at', 'bigint')
    .execute();
  await db.schema.createIndex('campaigns_user').on('campaigns').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('campaigns_status').on('campaigns').columns(['status']).execute();

  await db.schema
    .createTable('campaign_contacts')
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('contact_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    /** JSON object of strings (the contact's fields), or null. */
    .addColumn('fields', 'text')
    .addColumn('timezone', 'text')
    /** pending | calling | completed | voicemail | no_answer | busy | failed | opted_out | do_not_call. */
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    /** A pending contact is due at this time (retries and business hours move it). */
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    /** While calling and before its call is recorded: the instance that claimed it and until when (then it goes back). */
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    /** The call of the attempt under way. */
    .addColumn('session_id', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('campaign_contacts_pk', ['campaign_id', 'idx'])
    .execute();
  await db.schema
    .createIndex('campaign_contacts_due')
    .on('campaign_contacts')
    .columns(['campaign_id', 'status', 'next_attempt_at'])
    .execute();
  await db.schema.createIndex('campaign_contacts_session').on('campaign_contacts').columns(['session_id']).execute();

  await db.schema
    .createTable('campaign_attempts')
    .addColumn('session_id', 'text', (c) => c.primaryKey())
    .addColumn('campaign_id', 'text', (c) => c.notNull())
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    /** The call's outcome once it ended (null while it runs). */
    .addColumn('outcome', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('campaign_attempts_contact')
    .on('campaign_attempts')
    .columns(['campaign_id', 'idx', 'attempt'])
    .unique()
    .execute();

  await db.schema
    .createTable('do_not_call')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    /** api (PUT /api/do-not-call) | opt_out (the agent's opt_out tool). */
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('do_not_call_pk', ['user_id', 'phone'])
    .execute();

  await db.schema.alterTable('call_sessions').addColumn('campaign_id', 'text').execute();
}
