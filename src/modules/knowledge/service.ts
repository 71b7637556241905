// Knowledge bases (spec 4.15): records, ingestion of files and links, and
// hybrid retrieval (full-text fused with vectors by reciprocal rank fusion).
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/interface.js';
import type { KnowledgeQuota } from '../../config.js';
import type { LinkCrawler } from './crawler.js';
import { ExtractionError, type PreparedSlice } from './extract.js';
import type { FilePreparer } from './extract-pool.js';
import type { DocumentRow, KnowledgeStore, KnowledgeUsage, NewDocument, QuotaGuard } from './store.js';
import type { SearchIndexCache } from './search-cache.js';
import type { DocumentSource, KnowledgeBasesTable } from './tables.js';
import { queryTerms } from './text.js';

export interface KnowledgeBaseView {
  id: string;
  name: string;
  description: string;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface DocumentView {
  id: number;
  name: string;
  mimeType: string;
  size: number;
  source: DocumentSource;
  url?: string;
  createdAt: string;
}

export interface SearchMatch {
  score: number;
  text: string;
  document: { id: number; name: string; source: DocumentSource; url?: string };
}

/** A file part of an upload: its name and a way to read its bytes (which may fail on limits). */
export interface UploadedFile {
  filename: string;
  mimetype?: string;
  read(): Promise<Buffer>;
}

/** One source read, sliced and chunked (in a worker thread), before it is embedded and written. */
interface ReadText {
  name: string;
  mimeType: string;
  size: number;
  source: DocumentSource;
  url: string | null;
  slices: PreparedSlice[];
}

export const MAX_MATCHES = 5;
/** Candidates taken from each retrieval list before fusion. */
const CANDIDATES = 40;
/** Reciprocal rank fusion constant (Cormack et al. 2009). */
const RRF_K = 60;
/** Link documents are written in batches of this many (spec 8). */
const LINK_BATCH = 5;

export interface KnowledgeOptions {
  sliceBytes: number;
  chunkSize: number;
  chunkOverlap: number;
}

export const defaultKnowledgeOptions: KnowledgeOptions = { sliceBytes: 200 * 1024, chunkSize: 1000, chunkOverlap: 200 };

/** No quota: for callers (bench tools) that measure ingestion alone. */
export const unlimitedQuota: KnowledgeQuota = {
  documents: Number.MAX_SAFE_INTEGER,
  chunks: Number.MAX_SAFE_INTEGER,
  bytes: Number.MAX_SAFE_INTEGER,
};

const iso = (ms: number) => new Date(ms).toISOString();

export class KnowledgeService {
  constructor(
    private readonly store: KnowledgeStore,
    private readonly crawler: LinkCrawler,
    /** Reads, slices and chunks files off the event loop (worker threads with limits). */
    private readonly files: FilePreparer,
    private readonly embeddings: EmbeddingsProvider | null,
    private readonly clock: Clock,
    private readonly quota: KnowledgeQuota,
    /** In-memory full-text indexes (null: the database ranks every search). */
    private readonly indexes: SearchIndexCache | null = null,
  ) {}

  async list(userId: string): Promise<KnowledgeBaseView[]> {
    return (await this.store.listBases(userId)).map(viewOfBase);
  }

  async create(userId: string, input: { name: string; description?: string }): Promise<KnowledgeBaseView> {
    const now = this.clock.now();
    const row: KnowledgeBasesTable = {
      id: newId(now),
      user_id: userId,
      name: input.name,
      description: input.description ?? '',
      metadata: '{}',
      created_at: now,
      updated_at: now,
    };
    await this.store.insertBase(row);
    return viewOfBase(row);
  }

  async get(userId: string, id: string): Promise<KnowledgeBaseView & { documents: DocumentView[] }> {
    const base = await this.owned(userId, id);
    const documents = await this.store.listDocuments(id);
    return { ...viewOfBase(base), documents: documents.map(viewOfDocument) };
  }

  async update(userId: string, id: string, input: { name?: string; description?: string }): Promise<KnowledgeBaseView> {
    await this.owned(userId, id);
    const changes = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      updated_at: this.clock.now(),
    };
    if (!(await this.store.updateBase(userId, id, changes))) throw notFound('knowledge base');
    return viewOfBase(await this.owned(userId, id));
  }

  async delete(userId: string, id: string): Promise<void> {
    if (!(await this.store.deleteBase(userId, id))) throw notFound('knowledge base');
    this.indexes?.drop(id);
  }

  async deleteDocument(userId: string, id: string, documentId: number): Promise<void> {
    await this.owned(userId, id);
    if (!(await this.store.deleteDocument(id, documentId))) throw notFound('document');
  }

  /**
   * Reads every file first (in worker threads, each within the time, memory
   * and size limits); a file that cannot be read refuses the whole upload
   * (naming it) before anything is written. Then all documents and their
   * chunks are written in one transaction, if the user's quota allows them.
   */
  async addFiles(userId: string, id: string, files: AsyncIterable<UploadedFile>): Promise<DocumentView[]> {
    await this.owned(userId, id);
    const read: ReadText[] = [];
    for await (const file of files) {
      const bytes = await file.read();
      const name = file.filename || `file ${read.length + 1}`;
      try {
        const { mimeType, slices } = await this.files.prepare(name, bytes, file.mimetype);
        read.push({ name, mimeType, size: bytes.length, source: 'upload', url: null, slices });
      } catch (error) {
        if (error instanceof ExtractionError)
          throw new AppError(extractionCode[error.kind], `${name}: ${error.message}; nothing was added`, {
            file: name,
          });
        throw error;
      }
    }
    if (read.length === 0) throw invalidInput('send at least one file as a multipart part named "files"');
    const created = await this.store.insertDocuments(id, await this.prepare(read), this.quotaGuard(userId));
    return created.map(viewOfDocument);
  }

  /** What the user keeps in all their bases, and what the quota allows. */
  async usage(userId: string): Promise<{ used: KnowledgeUsage; allowed: KnowledgeUsage }> {
    return { used: await this.store.usage(userId), allowed: { ...this.quota } };
  }

  /**
   * Crawls the links (4 at a time) and writes documents in batches of 5 as
   * they arrive; failures are skipped and reported. A user already at the
   * quota is refused (413) before anything is downloaded; a batch that would
   * pass it is skipped, each of its links with the quota as reason.
   */
  async addLinks(
    userId: string,
    id: string,
    urls: string[],
  ): Promise<{ documents: DocumentView[]; skipped: Array<{ url: string; reason: string }> }> {
    await this.owned(userId, id);
    const used = await this.store.usage(userId);
    // A link adds at least one document, chunk and byte.
    this.checkQuota(used, { documents: 1, chunks: 1, bytes: 1 });
    const unique = [...new Set(urls.map((u) => u.trim()))];
    const documents: DocumentRow[] = [];
    const skipped: Array<{ url: string; reason: string }> = [];
    let pending: ReadText[] = [];
    let writing = Promise.resolve();
    const flush = () => {
      const batch = pending;
      pending = [];
      // Batches are written one after another, in the order they filled.
      writing = writing.then(async () => {
        if (!batch.length) return;
        try {
          documents.push(...(await this.store.insertDocuments(id, await this.prepare(batch), this.quotaGuard(userId))));
        } catch (error) {
          if (!(error instanceof AppError && error.code === 'quota_exceeded')) throw error;
          for (const item of batch) skipped.push({ url: item.url ?? item.name, reason: error.message });
        }
      });
      return writing;
    };
    await this.crawler.crawl(unique, async (result) => {
      if (!result.ok) return void skipped.push({ url: result.url, reason: result.reason });
      const { page } = result;
      pending.push({
        name: page.title || page.url,
        mimeType: page.mimeType,
        size: page.size,
        source: 'link',
        url: page.url,
        slices: page.slices,
      });
      if (pending.length >= LINK_BATCH) await flush();
    });
    await flush();
    documents.sort((a, b) => a.id - b.id);
    return { documents: documents.map(viewOfDocument), skipped };
  }

  /** At most 5 passages, best first; score is the fused reciprocal rank scaled so 1 means first in every list. */
  async search(userId: string, id: string, text: string): Promise<SearchMatch[]> {
    const base = await this.owned(userId, id);
    // The in-memory index when this instance has it current (or can bring it up to date); else the database's full-text index.
    const index = this.indexes ? await this.indexes.indexFor(id, base.index_version ?? 0) : null;
    const lists: number[][] = [
      index
        ? index.search(text, CANDIDATES)
        : (await this.store.searchText(id, queryTerms(text), CANDIDATES)).map((r) => r.id),
    ];
    if (this.embeddings) {
      try {
        const [vector] = await this.embeddings.embed([text]);
        lists.push((await this.store.searchVector(id, vector, CANDIDATES)).map((r) => r.id));
      } catch {
        // Vector search degrades alone: full-text results still answer.
      }
    }
    const fused = fuseRankings(lists).slice(0, MAX_MATCHES);
    const rows = new Map((await this.store.chunksWithDocuments(fused.map((f) => f.id))).map((r) => [r.id, r]));
    const best = lists.length / (RRF_K + 1);
    return fused.flatMap(({ id: chunkId, score }) => {
      const row = rows.get(chunkId);
      if (!row) return [];
      const source = row.source as DocumentSource;
      return [
        {
          score: Math.round((score / best) * 1e4) / 1e4,
          text: row.text,
          document: { id: row.document_id, name: row.name, source, ...(row.url ? { url: row.url } : {}) },
        },
      ];
    });
  }

  /** Names the slices of each source, and embeds their chunks when a provider is configured. */
  private async prepare(read: ReadText[]): Promise<NewDocument[]> {
    const now = this.clock.now();
    const docs: NewDocument[] = [];
    for (const item of read) {
      item.slices.forEach((slice, i) => {
        const several = item.slices.length > 1;
        const name = several ? `${item.name} (${i + 1}/${item.slices.length})` : item.name;
        docs.push({
          document: {
            name,
            mime_type: item.mimeType,
            size: several ? slice.bytes : item.size,
            source: item.source,
            url: item.url,
            created_at: now,
          },
          chunks: slice.chunks.map((text) => ({ title: name, text, embedding: null })),
        });
      });
    }
    if (this.embeddings) {
      const all = docs.flatMap((d) => d.chunks);
      const vectors = await this.embeddings.embed(all.map((c) => `${c.title}\n${c.text}`));
      all.forEach((chunk, i) => (chunk.embedding = vectors[i]));
    }
    return docs;
  }

  private quotaGuard(userId: string): QuotaGuard {
    return { userId, check: (used, adding) => this.checkQuota(used, adding) };
  }

  /** Refuses (413 quota_exceeded) a write that would take the user past any of the quota's measures; the answer says what is used and allowed. */
  private checkQuota(used: KnowledgeUsage, adding: KnowledgeUsage): void {
    const allowed = this.quota;
    const over = (['documents', 'chunks', 'bytes'] as const).filter((k) => used[k] + adding[k] > allowed[k]);
    if (over.length === 0) return;
    const what = over.map((k) => `${k}: ${used[k]} used + ${adding[k]} new > ${allowed[k]} allowed`).join('; ');
    throw new AppError('quota_exceeded', `knowledge storage quota exceeded (${what}); nothing was added`, {
      used,
      allowed: { ...allowed },
      adding,
    });
  }

  private async owned(userId: string, id: string): Promise<KnowledgeBasesTable> {
    const base = await this.store.findBase(userId, id);
    if (!base) throw notFound('knowledge base');
    return base;
  }
}

const extractionCode = {
  unsupported: 'unsupported_media_type',
  unreadable: 'invalid_input',
  too_large: 'payload_too_large',
  too_complex: 'file_too_complex',
} as const satisfies Record<ExtractionError['kind'], string>;

/** Reciprocal rank fusion: each list adds 1 / (k + rank) for every id it holds. */
export function fuseRankings(lists: number[][], k = RRF_K): Array<{ id: number; score: number }> {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...scores.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}

function viewOfBase(row: KnowledgeBasesTable): KnowledgeBaseView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function viewOfDocument(row: DocumentRow): DocumentView {
  return {
    id: row.id,
    name: row.name,
    mimeType: row.mime_type,
    size: row.size,
    source: row.source,
    ...(row.url ? { url: row.url } : {}),
    createdAt: iso(row.created_at),
  };
}
