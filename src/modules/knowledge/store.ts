// SQL of knowledge bases: records, documents, chunks, and the two retrieval
// queries (full-text and vector) over one base's chunks.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { KnowledgeBasesTable, KnowledgeDocumentsTable } from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

export type DocumentRow = Omit<KnowledgeDocumentsTable, 'id'> & { id: number };

export interface NewDocument {
  document: Omit<KnowledgeDocumentsTable, 'id' | 'knowledge_base_id'>;
  chunks: Array<{ title: string; text: string; embedding: number[] | null }>;
}

/** What one user keeps in all their knowledge bases: the quota's measure. */
export interface KnowledgeUsage {
  documents: number;
  chunks: number;
  /** Sum of the documents' sizes. */
  bytes: number;
}

/** Checks a write against the user's quota inside its transaction; throws to refuse it (nothing is written). */
export interface QuotaGuard {
  userId: string;
  check(usage: KnowledgeUsage, adding: KnowledgeUsage): void;
}

/** A chunk id with its rank in one retrieval list (best first). */
export interface RankedChunk {
  id: number;
}

export interface ChunkWithDocument {
  id: number;
  text: string;
  document_id: number;
  name: string;
  source: string;
  url: string | null;
}

interface DfCacheEntry {
  at: number;
  /** The store's write generation when the entry was made. */
  generation: number;
  total: number;
  df: Map<string, number>;
}

/** How long cached document frequencies are trusted (writes by other instances). */
const DF_CACHE_MS = 60_000;
/** Bases whose statistics are kept, least recently counted dropped first. */
const DF_CACHE_BASES = 256;
/** Terms kept per base before its term cache starts again. */
const DF_CACHE_TERMS = 10_000;

/** BM25's idf (Robertson–Spärck Jones with +1, as Lucene): never negative. */
export function bm25Idf(total: number, df: number): number {
  return Math.log(1 + (total - df + 0.5) / (df + 0.5));
}

export class KnowledgeStore {
  private readonly dfCache = new Map<string, DfCacheEntry>();
  private generation = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insertBase(row: KnowledgeBasesTable): Promise<void> {
    await this.db.insertInto('knowledge_bases').values(row).execute();
  }

  listBases(userId: string) {
    return this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  }

  findBase(userId: string, id: string) {
    return this.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  async updateBase(
    userId: string,
    id: string,
    changes: Partial<Pick<KnowledgeBasesTable, 'name' | 'description' | 'updated_at'>>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('knowledge_bases')
      .set(changes)
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Deletes the base's chunks (and so its full-text and vector entries) first, then its documents, then the base. */
  async deleteBase(userId: string, id: string): Promise<boolean> {
    return this.changing(id, async () =>
      this.db.transaction().execute(async (trx) => {
        const base = await trx
          .selectFrom('knowledge_bases')
          .select('id')
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        if (!base) return false;
        await trx.deleteFrom('knowledge_chunks').where('knowledge_base_id', '=', id).execute();
        await trx.deleteFrom('knowledge_documents').where('knowledge_base_id', '=', id).execute();
        await trx.deleteFrom('knowledge_bases').where('id', '=', id).execute();
        return true;
      }),
    );
  }

  listDocuments(baseId: string): Promise<DocumentRow[]> {
    return this.db
      .selectFrom('knowledge_documents')
      .selectAll()
      .where('knowledge_base_id', '=', baseId)
      .orderBy('id', 'asc')
      .execute();
  }

  /** Deletes one document of a base, its chunks first; false when the base has no such document. */
  async deleteDocument(baseId: string, documentId: number): Promise<boolean> {
    return this.changing(baseId, async () =>
      this.db.transaction().execute(async (trx) => {
        const doc = await trx
          .selectFrom('knowledge_documents')
          .select('id')
          .where('id', '=', documentId)
          .where('knowledge_base_id', '=', baseId)
          .executeTakeFirst();
        if (!doc) return false;
        await trx.deleteFrom('knowledge_chunks').where('document_id', '=', documentId).execute();
        await trx.deleteFrom('knowledge_documents').where('id', '=', documentId).execute();
        await this.bumpVersion(trx, baseId);
        return true;
      }),
    );
  }

  /** The user's documents, chunks and bytes over all their bases. */
  async usage(userId: string, db: Kysely<Database> = this.db): Promise<KnowledgeUsage> {
    const docs = await db
      .selectFrom('knowledge_documents as d')
      .innerJoin('knowledge_bases as b', 'b.id', 'd.knowledge_base_id')
      .where('b.user_id', '=', userId)
      .select((eb) => [
        eb.fn.countAll<number | string>().as('documents'),
        eb.fn.sum<number | string | null>('d.size').as('bytes'),
      ])
      .executeTakeFirstOrThrow();
    const chunks = await db
      .selectFrom('knowledge_chunks as c')
      .innerJoin('knowledge_bases as b', 'b.id', 'c.knowledge_base_id')
      .where('b.user_id', '=', userId)
      .select((eb) => eb.fn.countAll<number | string>().as('chunks'))
      .executeTakeFirstOrThrow();
    return { documents: Number(docs.documents), chunks: Number(chunks.chunks), bytes: Number(docs.bytes ?? 0) };
  }

  /**
   * Inserts documents and their chunks in one transaction; all or nothing.
   * With a quota guard, the user's usage is read inside the transaction
   * (PostgreSQL: under a per-user advisory lock, so two uploads at once
   * cannot both pass the quota; SQLite's single writer serializes them) and
   * the guard may refuse the write.
   */
  async insertDocuments(baseId: string, docs: NewDocument[], quota?: QuotaGuard): Promise<DocumentRow[]> {
    return this.changing(baseId, async () =>
      this.db.transaction().execute(async (trx) => {
        if (quota) {
          await lockForTransaction(trx, this.dialect, `knowledge-quota:${quota.userId}`);
          const adding = {
            documents: docs.length,
            chunks: docs.reduce((n, d) => n + d.chunks.length, 0),
            bytes: docs.reduce((n, d) => n + d.document.size, 0),
          };
          quota.check(await this.usage(quota.userId, trx), adding);
        }
        const created: DocumentRow[] = [];
        for (const { document, chunks } of docs) {
          const row = await trx
            .insertInto('knowledge_documents')
            .values({ ...document, knowledge_base_id: baseId })
            .returningAll()
            .executeTakeFirstOrThrow();
          created.push(row);
          const rows = chunks.map((chunk, position) => ({
            document_id: row.id,
            knowledge_base_id: baseId,
            position,
            title: chunk.title,
            text: chunk.text,
            embedding: chunk.embedding ? this.encodeVector(chunk.embedding) : null,
          }));
          // Bounded statements: SQLite allows 32,766 parameters per statement.
          for (let i = 0; i < rows.length; i += 500)
            await trx
              .insertInto('knowledge_chunks')
              .values(rows.slice(i, i + 500))
              .execute();
        }
        await this.bumpVersion(trx, baseId);
        return created;
      }),
    );
  }

  /**
   * Full-text candidates, best first: FTS5 bm25 (title weighted over text) on
   * SQLite; on PostgreSQL the sum over terms of idf × ts_rank over the weighted
   * tsvector (name A, text B), a BM25-like score. Any term may
   * match (OR); ranking rewards passages with more and rarer terms.
   */
  async searchText(baseId: string, terms: string[], limit: number): Promise<RankedChunk[]> {
    if (terms.length === 0) return [];
    if (this.dialect === 'sqlite') {
      const match = terms.map((t) => `"${t}"`).join(' OR ');
      const { rows } = await sql<RankedChunk>`
        select c.id as id from knowledge_chunks_fts f join knowledge_chunks c on c.id = f.rowid
        where knowledge_chunks_fts match ${match} and c.knowledge_base_id = ${baseId}
        order by f.rank limit ${limit}`.execute(this.db);
      return rows;
    }
    // ts_rank knows nothing of how rare a term is: weight each term's rank by
    // its BM25 idf within the base. Document frequencies come from the cache
    // (counted through the GIN index on a miss). The weighted sum is written
    // out term by term so each tsquery is a constant the planner folds once,
    // not a function evaluated per row and term.
    const stats = await this.termStats(baseId, terms);
    const score = sql.join(
      terms.map(
        (t) =>
          sql`${bm25Idf(stats.total, stats.df.get(t) ?? 0)}::float8 * ts_rank(search, to_tsquery('english', ${t}), 1)`,
      ),
      sql` + `,
    );
    const { rows } = await sql<RankedChunk>`
      select id from knowledge_chunks
      where knowledge_base_id = ${baseId} and search @@ to_tsquery('english', ${terms.join(' | ')})
      order by ${score} desc, id
      limit ${limit}`.execute(this.db);
    return rows;
  }

  /**
   * The base's chunk count and each term's document frequency (PostgreSQL's
   * idf weights), cached per base. Writes through this store drop the base's
   * entry; writes by another instance are seen after DF_CACHE_MS at most (a
   * stale weight only shifts ranking, never which chunks match).
   */
  private async termStats(baseId: string, terms: string[]): Promise<{ total: number; df: Map<string, number> }> {
    const now = Date.now();
    let entry = this.dfCache.get(baseId);
    if (!entry || now - entry.at > DF_CACHE_MS) {
      const total = await this.countChunks(baseId);
      entry = { at: now, generation: this.generation, total, df: new Map() };
      this.rememberStats(baseId, entry);
    }
    const missing = terms.filter((t) => !entry.df.has(t));
    if (missing.length) {
      const generation = this.generation;
      const { rows } = await sql<{ term: string; df: number }>`
        select t as term, (select count(*) from knowledge_chunks where knowledge_base_id = ${baseId} and search @@ to_tsquery('english', t)) as df
        from unnest(${missing}::text[]) as t`.execute(this.db);
      // A write that finished while counting may have made these counts stale: use them once, do not keep them.
      const df = generation === entry.generation && this.dfCache.get(baseId) === entry ? entry.df : new Map(entry.df);
      for (const r of rows) df.set(r.term, Number(r.df));
      if (df !== entry.df) return { total: entry.total, df };
      if (df.size > DF_CACHE_TERMS) df.clear();
    }
    return entry;
  }

  private rememberStats(baseId: string, entry: DfCacheEntry): void {
    this.dfCache.delete(baseId);
    this.dfCache.set(baseId, entry);
    if (this.dfCache.size > DF_CACHE_BASES) this.dfCache.delete(this.dfCache.keys().next().value as string);
  }

  /** Runs a write of a base's chunks, then drops the base's cached statistics (also when the write failed). */
  private async changing<T>(baseId: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.generation += 1;
      this.dfCache.delete(baseId);
    }
  }

  /**
   * Nearest chunks by cosine similarity, exact scan over the base's chunks of
   * the same dimension: sqlite-vec's vec_distance_cosine on SQLite; a dot
   * product of unit vectors over real[] on PostgreSQL.
   */
  async searchVector(baseId: string, vector: number[], limit: number): Promise<RankedChunk[]> {
    if (this.dialect === 'sqlite') {
      const { rows } = await sql<RankedChunk>`
        select id from knowledge_chunks
        where knowledge_base_id = ${baseId} and embedding is not null and vec_length(embedding) = ${vector.length}
        order by vec_distance_cosine(embedding, ${this.encodeVector(vector)}) limit ${limit}`.execute(this.db);
      return rows;
    }
    const { rows } = await sql<RankedChunk>`
      select id from knowledge_chunks
      where knowledge_base_id = ${baseId} and embedding is not null and cardinality(embedding) = ${vector.length}
      order by (select sum(a * b) from unnest(embedding, ${vector}::real[]) as t(a, b)) desc, id limit ${limit}`.execute(
      this.db,
    );
    return rows;
  }

  async chunksWithDocuments(ids: number[]): Promise<ChunkWithDocument[]> {
    if (ids.length === 0) return [];
    return this.db
      .selectFrom('knowledge_chunks as c')
      .innerJoin('knowledge_documents as d', 'd.id', 'c.document_id')
      .select([
        'c.id as id',
        'c.text as text',
        'c.document_id as document_id',
        'd.name as name',
        'd.source as source',
        'd.url as url',
      ])
      .where('c.id', 'in', ids)
      .execute();
  }

  /** The base's chunks after `afterId`, in id order (what the in-memory search index is built from). */
  chunksAfter(
    baseId: string,
    afterId: number,
    limit: number,
  ): Promise<Array<{ id: number; title: string; text: string }>> {
    return this.db
      .selectFrom('knowledge_chunks')
      .select(['id', 'title', 'text'])
      .where('knowledge_base_id', '=', baseId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  private async bumpVersion(trx: Kysely<Database>, baseId: string): Promise<void> {
    await trx
      .updateTable('knowledge_bases')
      .set((eb) => ({ index_version: eb('index_version', '+', 1) }))
      .where('id', '=', baseId)
      .execute();
  }

  countChunks(baseId: string) {
    return this.db
      .selectFrom('knowledge_chunks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('knowledge_base_id', '=', baseId)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  }

  private encodeVector(vector: number[]): Buffer | number[] {
    if (this.dialect === 'postgres') return vector;
    const floats = Float32Array.from(vector);
    return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
  }
}
