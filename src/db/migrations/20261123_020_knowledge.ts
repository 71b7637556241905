// Knowledge bases (spec 4.15): bases, their documents (numeric ids) and the
// chunks search runs over. Full-text: an FTS5 table kept in step by triggers
// on SQLite, a generated tsvector with a GIN index on PostgreSQL. Vectors:
// float32 BLOBs read by sqlite-vec on SQLite, real[] on PostgreSQL.
import { type Kysely, sql } from 'kysely';
import { bytesType, serialType } from '../columns.js';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const serial = serialType(dialect) as any;
  const serialKey = (c: any) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey());
  const idRef = dialect === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_bases_user')
    .on('knowledge_bases')
    .columns(['user_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('knowledge_documents')
    .addColumn('id', serial, serialKey)
    .addColumn('knowledge_base_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('knowledge_documents_base')
    .on('knowledge_documents')
    .columns(['knowledge_base_id', 'id'])
    .execute();

  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('id', serial, serialKey)
    .addColumn('document_id', idRef, (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
    .addColumn('knowledge_base_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('embedding', dialect === 'postgres' ? sql`real[]` : bytesType(dialect))
    .execute();
  await db.schema.createIndex('knowledge_chunks_base').on('knowledge_chunks').columns(['knowledge_base_id']).execute();
  await db.schema
    .createIndex('knowledge_chunks_document')
    .on('knowledge_chunks')
    .columns(['document_id', 'position'])
    .execute();

  if (dialect === 'postgres') {
    await sql`alter table knowledge_chunks add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')) stored`.execute(
      db,
    );
    await sql`create index knowledge_chunks_search on knowledge_chunks using gin (search)`.execute(db);
  } else {
    await sql`create virtual table knowledge_chunks_fts using fts5(
      title, text, content='knowledge_chunks', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')`.execute(
      db,
    );
    // Ranking by bm25 with the document name weighted over the text; `order by rank` uses it.
    await sql`insert into knowledge_chunks_fts (knowledge_chunks_fts, rank) values ('rank', 'bm25(2.0, 1.0)')`.execute(
      db,
    );
    await sql`create trigger knowledge_chunks_fts_insert after insert on knowledge_chunks begin
      insert into knowledge_chunks_fts (rowid, title, text) values (new.id, new.title, new.text); end`.execute(db);
    await sql`create trigger knowledge_chunks_fts_delete after delete on knowledge_chunks begin
      insert into knowledge_chunks_fts (knowledge_chunks_fts, rowid, title, text) values ('delete', old.id, old.title, old.text); end`.execute(
      db,
    );
  }
}
