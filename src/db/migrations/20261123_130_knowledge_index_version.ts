// Knowledge bases carry a version that every write of their chunks raises in
// the same transaction, so each instance's in-memory search index can tell
// at the next search whether it is current (docs/decisions/knowledge.md).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('knowledge_bases')
    .addColumn('index_version', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
