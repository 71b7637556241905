// Builds the knowledge area's services: the store, the link crawler on the
// shared SSRF-safe client, and the embeddings provider when one is configured.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { createOutboundHttp } from '../../lib/outbound-http.js';
import { createEmbeddingsProvider } from '../../providers/embeddings/index.js';
import { LinkCrawler } from './crawler.js';
import { ExtractionPool } from './extract-pool.js';
import { SearchIndexCache } from './search-cache.js';
import { KnowledgeService, defaultKnowledgeOptions } from './service.js';
import { KnowledgeStore } from './store.js';

export interface KnowledgeServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  /** KNOWLEDGE_* (crawling, extraction, quota, search cache); EMBEDDINGS_* (vector search when set). */
  config: Pick<Config, 'knowledge' | 'embeddings'>;
}

export function createKnowledgeServices(deps: KnowledgeServiceDeps) {
  const config = deps.config.knowledge;
  const embeddings = createEmbeddingsProvider(deps.config);
  const store = new KnowledgeStore(deps.db, deps.dialect);
  // Spec 8: 4 downloads at a time, 15 s each.
  const http = createOutboundHttp({
    allowPrivate: config.crawlAllowPrivate,
    allowOrigins: config.crawlAllowOrigins,
    timeoutMs: config.crawlTimeoutMs,
    maxBytes: config.crawlMaxBytes,
    maxRedirects: 5,
    userAgent: 'workspace-api knowledge crawler',
  });
  // Files and pages are read in worker threads, within the limits per file.
  const files = new ExtractionPool(config.extraction, defaultKnowledgeOptions);
  const crawler = new LinkCrawler(http, files, 4);
  const indexes = new SearchIndexCache(store, config.searchCacheBytes);
  const knowledge = new KnowledgeService(store, crawler, files, embeddings, deps.clock, config.quota, indexes);
  // Other areas check a knowledge_base_id through this (telephony's KnowledgeBaseLookup):
  // true only for the caller's own knowledge base.
  const lookup = {
    knowledgeBaseExists: async (userId: string, id: string) => (await store.findBase(userId, id)) !== undefined,
  };
  return {
    knowledge,
    lookup,
    limits: { maxFiles: config.maxFiles, maxFileBytes: config.maxFileBytes },
    embeddings: embeddings,
    files,
    close: async () => {
      await files.close();
      await http.close();
      await embeddings?.close?.();
    },
  };
}

export type KnowledgeServices = ReturnType<typeof createKnowledgeServices>;
