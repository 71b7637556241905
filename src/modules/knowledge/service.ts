// Knowledge bases (spec 4.15): records, ingestion of files and links, and
// hybrid retrieval (full-text fused with vectors by reciprocal rank fusion).
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/interface.js';
import type { LinkCrawler } from './crawler.js';
import { ExtractionError, extractText } from './extract.js';
import type { DocumentRow, KnowledgeStore, NewDocument } from './store.js';
import type { SearchIndexCache } from './search-cache.js';
import type { DocumentSource, KnowledgeBasesTable } from './tables.js';
import { chunkText, queryTerms, sliceText } from './text.js';

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

/** Text read from one source, before it is sliced and chunked. */
interface ReadText {
  name: string;
  mimeType: string;
  size: number;
  source: DocumentSource;
  url: string | null;
  text: string;
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

const iso = (ms: number) => new Date(ms).toISOString();

export class KnowledgeService {
  constructor(
    private readonly store: KnowledgeStore,
    private readonly crawler: LinkCrawler,
    private readonly embeddings: EmbeddingsProvider | null,
    private readonly clock: Clock,
    /** In-memory full-text indexes (null: the database ranks every search). */
    private readonly indexes: SearchIndexCache | null = null,
    private readonly options: KnowledgeOptions = defaultKnowledgeOptions,
  ) {}

  async list(userId: string): Promise<KnowledgeBaseView[]> {
    return (await this.store.listBases(userId)).map(viewOfBase);
  }

  async create(userId: string, input: { name: string; description?: string }): Promise<KnowledgeBaseView> {
    const now = this.clock.now();
    const row: KnowledgeBasesTable = { id: newId(now), user_id: userId, name: input.name, description: input.description ?? '', metadata: '{}', created_at: now, updated_at: now };
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
    const changes = { ...(input.name !== undefined ? { name: input.name } : {}), ...(input.description !== undefined ? { description: input.description } : {}), updated_at: this.clock.now() };
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
   * Reads every file first; a file that cannot be read refuses the whole
   * upload (naming it) before anything is written. Then all documents and
   * their chunks are written in one transaction.
   */
  async addFiles(userId: string, id: string, files: AsyncIterable<UploadedFile>): Promise<DocumentView[]> {
    await this.owned(userId, id);
    const read: ReadText[] = [];
    for await (const file of files) {
      const bytes = await file.read();
      const name = file.filename || `file ${read.length + 1}`;
      try {
        const { mimeType, text } = await extractText(name, bytes, file.mimetype);
        read.push({ name, mimeType, size: bytes.length, source: 'upload', url: null, text });
      } catch (error) {
        if (error instanceof ExtractionError) {
          throw new AppError(error.kind === 'unsupported' ? 'unsupported_media_type' : 'invalid_input', `${name}: ${error.message}; nothing was added`, { file: name });
        }
        throw error;
      }
    }
    if (read.length === 0) throw invalidInput('send at least one file as a multipart part named "files"');
    const created = await this.store.insertDocuments(id, await this.prepare(read));
    return created.map(viewOfDocument);
  }

  /** Crawls the links (4 at a time) and writes documents in batches of 5 as they arrive; failures are skipped and reported. */
  async addLinks(userId: string, id: string, urls: string[]): Promise<{ documents: DocumentView[]; skipped: Array<{ url: string; reason: string }> }> {
    await this.owned(userId, id);
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
        if (batch.length) documents.push(...(await this.store.insertDocuments(id, await this.prepare(batch))));
      });
      return writing;
    };
    await this.crawler.crawl(unique, async (result) => {
      if (!result.ok) return void skipped.push({ url: result.url, reason: result.reason });
      const { page } = result;
      pending.push({ name: page.title || page.url, mimeType: page.mimeType, size: page.size, source: 'link', url: page.url, text: page.text });
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
    const lists: number[][] = [index ? index.search(text, CANDIDATES) : (await this.store.searchText(id, queryTerms(text), CANDIDATES)).map((r) => r.id)];
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
      return [{ score: Math.round((score / best) * 1e4) / 1e4, text: row.text, document: { id: row.document_id, name: row.name, source, ...(row.url ? { url: row.url } : {}) } }];
    });
  }

  /** Slices long texts, chunks every slice and embeds the chunks when a provider is configured. */
  private async prepare(read: ReadText[]): Promise<NewDocument[]> {
    const now = this.clock.now();
    const docs: NewDocument[] = [];
    for (const item of read) {
      const slices = sliceText(item.text, this.options.sliceBytes);
      slices.forEach((slice, i) => {
        const name = slices.length > 1 ? `${item.name} (${i + 1}/${slices.length})` : item.name;
        const size = slices.length > 1 ? Buffer.byteLength(slice) : item.size;
        const chunks = chunkText(slice, { size: this.options.chunkSize, overlap: this.options.chunkOverlap });
        docs.push({
          document: { name, mime_type: item.mimeType, size, source: item.source, url: item.url, created_at: now },
          chunks: chunks.map((text) => ({ title: name, text, embedding: null })),
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

  private async owned(userId: string, id: string): Promise<KnowledgeBasesTable> {
    const base = await this.store.findBase(userId, id);
    if (!base) throw notFound('knowledge base');
    return base;
  }
}

/** Reciprocal rank fusion: each list adds 1 / (k + rank) for every id it holds. */
export function fuseRankings(lists: number[][], k = RRF_K): Array<{ id: number; score: number }> {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + rank + 1)));
  return [...scores.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || a.id - b.id);
}

function viewOfBase(row: KnowledgeBasesTable): KnowledgeBaseView {
  return { id: row.id, name: row.name, description: row.description, metadata: JSON.parse(row.metadata) as Record<string, unknown>, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
}

function viewOfDocument(row: DocumentRow): DocumentView {
  return { id: row.id, name: row.name, mimeType: row.mime_type, size: row.size, source: row.source, ...(row.url ? { url: row.url } : {}), createdAt: iso(row.created_at) };
}
