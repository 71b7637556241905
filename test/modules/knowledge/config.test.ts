import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

describe('knowledge configuration', () => {
  it('defaults to 25 files of 50 MB, no private crawling, no embeddings', () => {
    const config = loadConfig({ NODE_ENV: 'test' }, '/tmp');
    expect(config.knowledge).toEqual({ maxFiles: 25, maxFileBytes: 50 * 1024 * 1024, crawlAllowPrivate: false, crawlMaxBytes: 10 * 1024 * 1024, crawlTimeoutMs: 15_000, searchCacheBytes: 256 * 1024 * 1024 });
    expect(config.embeddings).toBeNull();
  });

  it('reads the embeddings endpoint, model and key', () => {
    const config = loadConfig({ NODE_ENV: 'test', EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1', EMBEDDINGS_MODEL: 'nomic-embed-text', EMBEDDINGS_API_KEY: 'k', CRAWL_ALLOW_PRIVATE: '1' }, '/tmp');
    expect(config.embeddings).toEqual({ url: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text', apiKey: 'k' });
    expect(config.knowledge.crawlAllowPrivate).toBe(true);
  });

  it('names every bad knowledge variable', () => {
    try {
      loadConfig({ NODE_ENV: 'test', EMBEDDINGS_URL: 'ftp://models', KNOWLEDGE_MAX_FILES: '0', CRAWL_ALLOW_PRIVATE: 'maybe' }, '/tmp');
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const text = (error as ConfigError).problems.join('\n');
      for (const name of ['EMBEDDINGS_URL', 'KNOWLEDGE_MAX_FILES', 'CRAWL_ALLOW_PRIVATE']) expect(text).toContain(name);
    }
  });
});
