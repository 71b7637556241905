// The in-memory search indexes of this instance, one per knowledge base, kept
// in step with the database by the base's `index_version` (migration 130),
// which every write of its chunks raises in the same transaction. A search
// reads the version with the base (no extra query) and:
//   - same version: the index answers;
//   - newer version, and the base only gained chunks: the new chunks are read
//     and added, then the index answers;
//   - anything else (a deletion, a base never seen): the index is rebuilt from
//     the base's chunks.
// So another instance's write is seen at the next search. One build or
// update per base runs at a time; searches that arrive meanwhile wait for it.
// A build gives the event loop back every 10 ms: indexing 10,000 chunks is
// more than a second of work, which must not stop other requests or the
// audio of calls carried by this instance.
// Indexes past KNOWLEDGE_SEARCH_CACHE_MB in total are dropped, least recently
// used first; a base too large for the limit is searched by the database.
import { type IndexedChunk, SearchIndex } from './search-index.js';

export interface ChunkSource {
  /** The base's chunks with an id above `afterId`, in id order, at most `limit`. */
  chunksAfter(baseId: string, afterId: number, limit: number): Promise<IndexedChunk[]>;
  countChunks(baseId: string): Promise<number>;
}

interface Entry {
  version: number;
  index: SearchIndex;
}

const PAGE = 2000;
/** Longest stretch of indexing before other work gets a turn. */
const SLICE_MS = 10;

/** Adds the chunks to the index, yielding to the event loop every SLICE_MS. */
async function addInSlices(index: SearchIndex, chunks: IndexedChunk[]): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < chunks.length; i++) {
    index.add(chunks[i]);
    if ((i & 7) === 7 && performance.now() - sliceStart >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

export class SearchIndexCache {
  private readonly entries = new Map<string, Entry>();
  private readonly building = new Map<string, Promise<Entry | null>>();
  private bytes = 0;

  constructor(
    private readonly source: ChunkSource,
    /** Largest total size of the indexes kept; 0 turns the cache off. */
    private readonly maxBytes: number,
  ) {}

  /** The index of `baseId` at `version`, or null when the base is searched by the database (over the limit). */
  async indexFor(baseId: string, version: number): Promise<SearchIndex | null> {
    if (this.maxBytes <= 0) return null;
    const entry = this.entries.get(baseId);
    if (entry && entry.version === version) {
      this.touch(baseId, entry);
      return entry.index;
    }
    let pending = this.building.get(baseId);
    if (!pending) {
      pending = this.bring(baseId, version, entry ?? null).finally(() => this.building.delete(baseId));
      this.building.set(baseId, pending);
    }
    const built = await pending;
    // A build for an older version (started before this search read the base) is not this version's answer.
    if (built && built.version !== version) return this.indexFor(baseId, version);
    return built?.index ?? null;
  }

  /** Forgets a base (deleted). */
  drop(baseId: string): void {
    const entry = this.entries.get(baseId);
    if (!entry) return;
    this.bytes -= entry.index.bytes;
    this.entries.delete(baseId);
  }

  private async bring(baseId: string, version: number, current: Entry | null): Promise<Entry | null> {
    this.drop(baseId);
    let index = current?.index ?? null;
    if (index) {
      // Appended chunks only when the count is what the index holds plus the new ones.
      const added = await this.readAll(baseId, index.lastId);
      if ((await this.source.countChunks(baseId)) === index.size + added.length) await addInSlices(index, added);
      else index = null;
    }
    if (!index) {
      index = new SearchIndex();
      await addInSlices(index, await this.readAll(baseId, 0));
    }
    if (index.bytes > this.maxBytes) return null;
    const entry = { version, index };
    this.entries.set(baseId, entry);
    this.bytes += index.bytes;
    while (this.bytes > this.maxBytes) {
      const [oldest] = this.entries.keys();
      if (oldest === baseId) break;
      this.drop(oldest);
    }
    return entry;
  }

  private async readAll(baseId: string, afterId: number): Promise<IndexedChunk[]> {
    const out: IndexedChunk[] = [];
    for (let after = afterId; ; ) {
      const page = await this.source.chunksAfter(baseId, after, PAGE);
      out.push(...page);
      if (page.length < PAGE) return out;
      after = page[page.length - 1].id;
      // Long builds give other requests a turn between pages.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private touch(baseId: string, entry: Entry): void {
    this.entries.delete(baseId);
    this.entries.set(baseId, entry);
  }
}
