// Knowledge bases: uploads, reading files, the link crawler, search and embeddings (docs/decisions/knowledge.md).
import { availableParallelism } from 'node:os';
import { flag, integer, optional, section, text } from './declare.js';
import type { Config } from './types.js';

const v = {
  maxFiles: integer('KNOWLEDGE_MAX_FILES', 25, 1, 1000, 'Files per knowledge-base upload; more → 413'),
  maxFileBytes: integer(
    'KNOWLEDGE_MAX_FILE_BYTES',
    50 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
    'Bytes per uploaded file; larger → 413 naming the file',
  ),
  // One core is left to the event loop: by default one worker per core but one, at most 4.
  extractWorkers: integer(
    'KNOWLEDGE_EXTRACT_WORKERS',
    Math.max(1, Math.min(4, availableParallelism() - 1)),
    1,
    64,
    'Worker threads that read uploaded files and crawled pages (started with the first file, stopped after 30 s idle)',
    'cores − 1 (1 to 4)',
  ),
  extractTimeoutSeconds: integer(
    'KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS',
    30,
    1,
    3600,
    'Time to read one file; longer → 422 `file_too_complex`',
  ),
  extractMemoryMb: integer(
    'KNOWLEDGE_EXTRACT_MEMORY_MB',
    256,
    32,
    16_384,
    'Heap of one reading worker; more → 422 `file_too_complex`',
  ),
  maxInflatedMb: integer(
    'KNOWLEDGE_MAX_INFLATED_MB',
    64,
    1,
    16_384,
    'What one DOCX (zip entries) or PDF (deflated streams) may inflate to; more → 413',
  ),
  maxTextMb: integer('KNOWLEDGE_MAX_TEXT_MB', 16, 1, 4096, 'Text one file may yield; more → 413'),
  quotaDocuments: integer(
    'KNOWLEDGE_QUOTA_DOCUMENTS',
    10_000,
    1,
    100_000_000,
    'Documents per user over all knowledge bases; more → 413 `quota_exceeded`',
  ),
  quotaChunks: integer(
    'KNOWLEDGE_QUOTA_CHUNKS',
    100_000,
    1,
    1_000_000_000,
    'Chunks (about 1,000 characters each) per user; more → 413 `quota_exceeded`',
  ),
  quotaMb: integer(
    'KNOWLEDGE_QUOTA_MB',
    1024,
    1,
    16_777_216,
    'Sum of document sizes per user, in MB; more → 413 `quota_exceeded`',
  ),
  crawlAllowPrivate: flag(
    'CRAWL_ALLOW_PRIVATE',
    "Let the link crawler reach loopback, private and link-local addresses (refused by default, after DNS and on every redirect; outside production the server's own `PUBLIC_URL` origin is allowed without it)",
  ),
  crawlMaxBytes: integer(
    'CRAWL_MAX_BYTES',
    10 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
    'Bytes per crawled page or file; larger → skipped',
  ),
  searchCacheMb: integer(
    'KNOWLEDGE_SEARCH_CACHE_MB',
    256,
    0,
    65_536,
    'Memory for in-memory search indexes of knowledge bases (per instance; least recently used dropped first; `0` ranks every search in the database)',
  ),
  embeddingsUrl: optional(
    'EMBEDDINGS_URL',
    'Base URL of an OpenAI-compatible embeddings API (e.g. `http://127.0.0.1:11434/v1` for Ollama, `https://api.openai.com/v1`); requests go to `…/embeddings`. Unset: knowledge search is full-text only',
  ),
  embeddingsModel: text('EMBEDDINGS_MODEL', 'text-embedding-3-small', 'Model name sent with each embeddings request'),
  embeddingsApiKey: optional('EMBEDDINGS_API_KEY', 'Bearer key for the embeddings API, if it needs one'),
};

const MB = 1024 * 1024;

export const knowledgeSection = section<Pick<Config, 'knowledge' | 'embeddings'>>(
  'Knowledge bases',
  v,
  (read, { nodeEnv, earlier, url }) => {
    const embeddingsUrl = read(v.embeddingsUrl);
    const embeddings =
      embeddingsUrl && url('EMBEDDINGS_URL', embeddingsUrl, ['http:', 'https:'])
        ? { url: embeddingsUrl, model: read(v.embeddingsModel), apiKey: read(v.embeddingsApiKey) }
        : null;
    return {
      knowledge: {
        maxFiles: read(v.maxFiles),
        maxFileBytes: read(v.maxFileBytes),
        crawlAllowPrivate: read(v.crawlAllowPrivate),
        crawlAllowOrigins: nodeEnv === 'production' || !earlier.publicUrl ? [] : [earlier.publicUrl],
        crawlMaxBytes: read(v.crawlMaxBytes),
        crawlTimeoutMs: 15_000,
        searchCacheBytes: read(v.searchCacheMb) * MB,
        extraction: {
          workers: read(v.extractWorkers),
          timeoutMs: read(v.extractTimeoutSeconds) * 1000,
          memoryMb: read(v.extractMemoryMb),
          maxInflatedBytes: read(v.maxInflatedMb) * MB,
          maxTextBytes: read(v.maxTextMb) * MB,
          idleMs: 30_000,
        },
        quota: {
          documents: read(v.quotaDocuments),
          chunks: read(v.quotaChunks),
          bytes: read(v.quotaMb) * MB,
        },
      },
      embeddings,
    };
  },
);
