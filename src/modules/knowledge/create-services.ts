// Builds the knowledge area's services: the store, the link crawler on the
// shared SSRF-safe client, and the embeddings provider when one is configured.
import type { Kysely } from 'kysely';
import type { KnowledgeConfig } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { createOutboundHttp } from '../../lib/outbound-http.js';
import type { EmbeddingsProvider } from '../../providers/embeddings/interface.js';
import { LinkCrawler } from './crawler.js';
import { ExtractionPool } from './extract-pool.js';
import { SearchIndexCache } from './search-cache.js';
import { KnowledgeService, defaultKnowledgeOptions } from './service.js';
import { KnowledgeStore } from './store.js';

export interface KnowledgeServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  config: KnowledgeConfig;
  embeddings: EmbeddingsProvider | null;
}

export function createKnowledgeServices(deps: KnowledgeServiceDeps) {
  const store = new KnowledgeStore(deps.db, deps.dialect);
  // Spec 8: 4 downloads at a time, 15 s each.
  const http = createOutboundHttp({
    allowPrivate: deps.config.crawlAllowPrivate,
    allowOrigins: deps.config.crawlAllowOrigins,
    timeoutMs: deps.config.crawlTimeoutMs,
    maxBytes: deps.config.crawlMaxBytes,
    maxRedirects: 5,
    userAgent: 'workspace-api knowledge crawler',
  });
  // Files and pages are read in worker threads, within the limits per file.
  const files = new ExtractionPool(deps.config.extraction, defaultKnowledgeOptions);
  const crawler = new LinkCrawler(http, files, 4);
  const indexes = new SearchIndexCache(store, deps.config.searchCacheBytes);
  const knowledge = new KnowledgeService(
    store,
    crawler,
    files,
    deps.embeddings,
    deps.clock,
    deps.config.quota,
    indexes,
  );
  // Other areas check a knowledge_base_id through this (telephony's KnowledgeBaseLookup):
  // true only for the caller's own knowledge base.
  const lookup = {
    knowledgeBaseExists: async (userId: string, id: string) => (await store.findBase(userId, id)) !== undefined,
  };
  return {
    knowledge,
    lookup,
    limits: { maxFiles: deps.config.maxFiles, maxFileBytes: deps.config.maxFileBytes },
    embeddings: deps.embeddings,
    files,
    close: async () => {
      await files.close();
      await http.close();
      await deps.embeddings?.close?.();
    },
  };
}

export type KnowledgeServices = ReturnType<typeof createKnowledgeServices>;
