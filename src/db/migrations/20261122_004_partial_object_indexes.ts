// Every object insert writes one page per index it touches. Two indexes only
// serve a few rows: store containers (looked up by user) and children (looked
// up by parent). Making them partial keeps plain objects out of both.
// Queries must spell the conditions the same way: kind = 'store' as a literal,
// and related_id = ? (which implies related_id IS NOT NULL).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('objects_user_kind').execute();
  await db.schema
    .createIndex('objects_user_stores')
    .on('objects')
    .column('user_id')
    .where(sql.ref('kind'), '=', sql.lit('store'))
    .execute();
  await db.schema.dropIndex('objects_related').execute();
  await db.schema
    .createIndex('objects_related')
    .on('objects')
    .columns(['related_id', 'created_at', 'id'])
    .where(sql.ref('related_id'), 'is not', null)
    .execute();
}
