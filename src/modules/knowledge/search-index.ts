// An in-memory BM25 index of one knowledge base's chunks, for the full-text
// half of search (docs/decisions/knowledge.md "Search speed"). The database's
// full-text index (FTS5 / tsvector) ranks every matching chunk for every
// query; this keeps each term's postings in arrays, so a query costs a few
// additions per posting of its terms and no database work.
//
// Terms: words of letters and digits (Unicode), lower-cased, without
// diacritics, English stopwords dropped, Porter-stemmed. The document name
// counts twice (as FTS5's column weight 2 did). Chunks are only appended;
// anything else (a deletion) is a rebuild, decided by SearchIndexCache.
import { stemmer } from 'stemmer';
import { STOPWORDS } from './text.js';

const K1 = 1.2;
const B = 0.75;
/**
 * BM25+ (Lv and Zhai, 2011, with their recommended δ = 1): every matching
 * term adds at least δ·idf, so a long passage holding more of the question's
 * words is not outranked by a short one repeating one of them. On the bench's
 * 48 questions plain BM25 found 0.938 of the answers in the top 5, BM25+ 0.958,
 * for any k1 in 0.9–1.2 and b in 0.5–0.75 (MiniSearch, also BM25+, 0.958).
 */
const DELTA = 1;
const TITLE_WEIGHT = 2;
const MAX_TERM_LENGTH = 64;

/**
 * Stems of the words seen, since the Porter stemmer (a run of regular
 * expressions per word) was most of an index build: a base's vocabulary is
 * far smaller than its word count. Emptied when full, which bounds its memory.
 */
const stems = new Map<string, string>();
const MAX_STEMS = 50_000;

function stem(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear();
    stemmed = stemmer(word);
    stems.set(word, stemmed);
  }
  return stemmed;
}

/** The index terms of a text, in order, repeats kept (for term frequencies). */
export function indexTerms(text: string): string[] {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const out: string[] = [];
  for (const word of words) {
    if (word.length >= MAX_TERM_LENGTH || STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

export interface IndexedChunk {
  id: number;
  title: string;
  text: string;
}

interface Postings {
  /** Dense chunk positions (index into `ids`). */
  docs: number[];
  /** Weighted term frequencies, same order. */
  tfs: number[];
}

export class SearchIndex {
  private readonly postings = new Map<string, Postings>();
  /** Chunk id at each dense position. */
  private readonly ids: number[] = [];
  /** Weighted length (terms) at each dense position. */
  private readonly lengths: number[] = [];
  private totalLength = 0;
  private postingCount = 0;
  /** The highest chunk id added (chunks arrive in id order). */
  lastId = 0;
  /** Per-search score accumulator, reused (searches run one at a time on the event loop); zero between searches. */
  private scratch = new Float64Array(0);

  get size(): number {
    return this.ids.length;
  }

  /** A rough count of the bytes the index holds (for the cache's limit). */
  get bytes(): number {
    return this.postingCount * 16 + this.ids.length * 16 + this.postings.size * 80;
  }

  add(chunk: IndexedChunk): void {
    const position = this.ids.length;
    const counts = new Map<string, number>();
    let length = 0;
    for (const term of indexTerms(chunk.title)) {
      counts.set(term, (counts.get(term) ?? 0) + TITLE_WEIGHT);
      length += TITLE_WEIGHT;
    }
    for (const term of indexTerms(chunk.text)) {
      counts.set(term, (counts.get(term) ?? 0) + 1);
      length += 1;
    }
    for (const [term, tf] of counts) {
      let list = this.postings.get(term);
      if (!list) {
        list = { docs: [], tfs: [] };
        this.postings.set(term, list);
      }
      list.docs.push(position);
      list.tfs.push(tf);
    }
    this.postingCount += counts.size;
    this.ids.push(chunk.id);
    this.lengths.push(length);
    this.totalLength += length;
    if (chunk.id > this.lastId) this.lastId = chunk.id;
  }

  /**
   * The ids of the best `limit` chunks for the query, best first: BM25 summed
   * over the query's distinct terms, any of which may match. Ties: lower id first.
   */
  search(query: string, limit: number): number[] {
    const n = this.ids.length;
    if (n === 0) return [];
    const terms = [...new Set(indexTerms(query))];
    const avg = this.totalLength / n;
    if (this.scratch.length < n) this.scratch = new Float64Array(Math.max(n, this.scratch.length * 2));
    const scores = this.scratch;
    const touched: number[] = [];
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.docs.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const { docs, tfs } = list;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i];
        const tf = tfs[i];
        if (scores[doc] === 0) touched.push(doc);
        scores[doc] += idf * (DELTA + (tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[doc]) / avg)));
      }
    }
    const best = topK(touched, scores, this.ids, limit);
    for (const doc of touched) scores[doc] = 0;
    return best;
  }
}

/** The `limit` best of the touched positions by score (then lower id), as chunk ids. */
function topK(touched: number[], scores: Float64Array, ids: number[], limit: number): number[] {
  const better = (a: number, b: number) => scores[a] > scores[b] || (scores[a] === scores[b] && ids[a] < ids[b]);
  // A small sorted buffer: limit is a few dozen, touched may be thousands.
  const best: number[] = [];
  for (const doc of touched) {
    if (best.length === limit && !better(doc, best[best.length - 1])) continue;
    let i = best.length < limit ? best.length : limit - 1;
    if (best.length < limit) best.push(doc);
    while (i > 0 && better(doc, best[i - 1])) {
      best[i] = best[i - 1];
      i--;
    }
    best[i] = doc;
  }
  return best.map((doc) => ids[doc]);
}
