import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

describe('knowledge configuration', () => {
  it('defaults to 25 files of 50 MB, no private crawling, no embeddings', () => {
    const config = loadConfig({ NODE_ENV: 'test' }, '/tmp');
    expect(config.knowledge).toEqual({
      maxFiles: 25,
      maxFileBytes: 50 * 1024 * 1024,
      crawlAllowPrivate: false,
      crawlAllowOrigins: ['http://127.0.0.1:3000'],
      crawlMaxBytes: 10 * 1024 * 1024,
      crawlTimeoutMs: 15_000,
      searchCacheBytes: 256 * 1024 * 1024,
      extraction: {
        workers: Math.max(1, Math.min(4, availableParallelism() - 1)),
        timeoutMs: 30_000,
        memoryMb: 256,
        maxInflatedBytes: 64 * 1024 * 1024,
        maxTextBytes: 16 * 1024 * 1024,
        idleMs: 30_000,
      },
      quota: { documents: 10_000, chunks: 100_000, bytes: 1024 * 1024 * 1024 },
    });
    expect(config.embeddings).toBeNull();
  });

  it('reads the embeddings endpoint, model and key', () => {
    const config = loadConfig(
      {
        NODE_ENV: 'test',
        EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1',
        EMBEDDINGS_MODEL: 'nomic-embed-text',
        EMBEDDINGS_API_KEY: 'k',
        CRAWL_ALLOW_PRIVATE: '1',
      },
      '/tmp',
    );
    expect(config.embeddings).toEqual({ url: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text', apiKey: 'k' });
    expect(config.knowledge.crawlAllowPrivate).toBe(true);
  });

  it('reads the extraction limits and the quota', () => {
    const config = loadConfig(
      {
        NODE_ENV: 'test',
        KNOWLEDGE_EXTRACT_WORKERS: '3',
        KNOWLEDGE_EXTRACT_TIMEOUT_SECONDS: '5',
        KNOWLEDGE_EXTRACT_MEMORY_MB: '128',
        KNOWLEDGE_MAX_INFLATED_MB: '8',
        KNOWLEDGE_MAX_TEXT_MB: '2',
        KNOWLEDGE_QUOTA_DOCUMENTS: '10',
        KNOWLEDGE_QUOTA_CHUNKS: '100',
        KNOWLEDGE_QUOTA_MB: '5',
      },
      '/tmp',
    );
    expect(config.knowledge.extraction).toEqual({
      workers: 3,
      timeoutMs: 5000,
      memoryMb: 128,
      maxInflatedBytes: 8 * 1024 * 1024,
      maxTextBytes: 2 * 1024 * 1024,
      idleMs: 30_000,
    });
    expect(config.knowledge.quota).toEqual({ documents: 10, chunks: 100, bytes: 5 * 1024 * 1024 });
  });

  it('names every bad knowledge variable', () => {
    try {
      loadConfig(
        {
          NODE_ENV: 'test',
          EMBEDDINGS_URL: 'ftp://models',
          KNOWLEDGE_MAX_FILES: '0',
          CRAWL_ALLOW_PRIVATE: 'maybe',
          KNOWLEDGE_EXTRACT_WORKERS: '0',
          KNOWLEDGE_QUOTA_CHUNKS: 'lots',
        },
        '/tmp',
      );
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const text = (error as ConfigError).problems.join('\n');
      for (const name of [
        'EMBEDDINGS_URL',
        'KNOWLEDGE_MAX_FILES',
        'CRAWL_ALLOW_PRIVATE',
        'KNOWLEDGE_EXTRACT_WORKERS',
        'KNOWLEDGE_QUOTA_CHUNKS',
      ])
        expect(text).toContain(name);
    }
  });
});
