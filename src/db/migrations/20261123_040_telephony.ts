// Telephony: numbers, addresses, used price tokens, inbound configurations, SMS.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('inbound_configurations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('human_agents', 'text', (c) => c.notNull())
    .addColumn('knowledge_base_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('inbound_configurations_user')
    .on('inbound_configurations')
    .columns(['user_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('phone_numbers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_sid', 'text')
    .addColumn('phone_number', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('number_type', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('capabilities', 'text', (c) => c.notNull())
    .addColumn('monthly_cents', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('address_sid', 'text')
    .addColumn('subscription_id', 'text')
    .addColumn('inbound_configuration_id', 'text', (c) =>
      c.references('inbound_configurations.id').onDelete('set null'),
    )
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // One owner per number at a provider, across instances.
    .addUniqueConstraint('phone_numbers_provider_number', ['provider', 'phone_number'])
    .execute();
  await db.schema.createIndex('phone_numbers_user').on('phone_numbers').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('phone_numbers_inbound').on('phone_numbers').column('inbound_configuration_id').execute();

  await db.schema
    .createTable('phone_addresses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('iso_country', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('phone_price_tokens')
    .addColumn('jti', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sms_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('phone_number_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_sid', 'text')
    .addColumn('from_number', 'text', (c) => c.notNull())
    .addColumn('to_number', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sms_messages_user').on('sms_messages').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('sms_statuses')
    .addColumn('message_id', 'text', (c) => c.notNull().references('sms_messages.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    // A status is recorded once per message: a repeated callback changes nothing.
    .addPrimaryKeyConstraint('sms_statuses_pk', ['message_id', 'status'])
    .execute();
}
