import type { Kysely } from 'kysely';
import { bytesType } from '../columns.js';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const bytes = bytesType(dialect);

  await db.schema
    .createTable('service_keys')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'integer', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('servers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('servers_user_name', ['user_id', 'name'])
    .execute();

  await db.schema
    .createTable('store_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('server', 'text', (c) => c.notNull())
    .addColumn('key_material', 'text', (c) => c.notNull())
    .addColumn('iv', bytes, (c) => c.notNull())
    .addColumn('deprecated', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('store_keys_user').on('store_keys').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('objects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_id', 'text')
    // The service detaches children itself (bumping their version); the
    // foreign key only guards against a parent deleted by a concurrent request.
    .addColumn('related_id', 'text', (c) => c.references('objects.id').onDelete('set null'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('store', 'text')
    .addColumn('content', bytes, (c) => c.notNull())
    .addColumn('auth_tag', bytes, (c) => c.notNull())
    .addColumn('iv', bytes)
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('objects_related').on('objects').columns(['related_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('objects_user_kind').on('objects').columns(['user_id', 'kind']).execute();

  await db.schema
    .createTable('publications')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('related_id', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull().references('objects.id').onDelete('cascade'))
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('publications_pk', ['user_id', 'type', 'related_id'])
    .execute();
  await db.schema.createIndex('publications_object').on('publications').column('object_id').execute();

  await db.schema
    .createTable('data_roots')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('root_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
