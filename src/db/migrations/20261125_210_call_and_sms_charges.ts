// Calls and SMS cost the owner money (DESIGN "Money for calls and SMS",
// docs/decisions/calls.md "Charges"): one row per authorized call with what it
// may use of the plan's allowance and of the balance, settled once; the
// direction of a call session; and the price of an SMS with its hold's state.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('call_charges')
    /** The call session's id; the ledger hold is `hold:call:{ref}`. */
    .addColumn('ref', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    /** outbound | inbound */
    .addColumn('direction', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    /** Per-minute rate in ten-thousandths of a dollar, fixed at authorization. */
    .addColumn('rate', 'integer', (c) => c.notNull())
    /** The longest the call may last (allowance share + what the hold pays for). */
    .addColumn('max_seconds', 'integer', (c) => c.notNull())
    /** Seconds of the plan's allowance set aside for this call; after settling, the seconds it used of them. */
    .addColumn('allowance_seconds', 'integer', (c) => c.notNull())
    /** 1 when the call counts against the plan's included calls. */
    .addColumn('allowance_call', 'integer', (c) => c.notNull())
    .addColumn('hold_cents', 'integer', (c) => c.notNull())
    /** open (the call may run) → settled | refused (its hold could not be made) */
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('seconds', 'integer')
    .addColumn('charged_cents', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('settled_at', 'bigint')
    .execute();
  await db.schema.createIndex('call_charges_user_state').on('call_charges').columns(['user_id', 'state']).execute();
  await db.schema
    .alterTable('call_sessions')
    .addColumn('direction', 'text', (c) => c.notNull().defaultTo('outbound'))
    .execute();
  /** Segments of the message and the price held for it (null: not charged, e.g. sent before charging existed). */
  await db.schema.alterTable('sms_messages').addColumn('segments', 'integer').execute();
  await db.schema.alterTable('sms_messages').addColumn('price_cents', 'integer').execute();
  /** held → charged | refunded; null when nothing was held. */
  await db.schema.alterTable('sms_messages').addColumn('charge_state', 'text').execute();
}
