// Downloads links for a knowledge base (spec 8: 4 at a time, 15 s each)
// through the shared SSRF-safe client, and reads each with the same
// extractors as uploads, in the same worker threads and within the same
// limits (HTML reduced to its readable text).
import { type OutboundHttp, OutboundHttpError, readBody } from '../../lib/outbound-http.js';
import { ExtractionError, type PreparedText } from './extract.js';
import type { FilePreparer } from './extract-pool.js';

export interface CrawledPage extends PreparedText {
  url: string;
  size: number;
}

export type CrawlResult = { ok: true; page: CrawledPage } | { ok: false; url: string; reason: string };

export class LinkCrawler {
  constructor(
    private readonly http: OutboundHttp,
    private readonly files: FilePreparer,
    private readonly concurrency = 4,
  ) {}

  /** Crawls every URL with at most `concurrency` downloads at a time; each result is handed to onResult as it completes. */
  async crawl(urls: string[], onResult: (result: CrawlResult) => Promise<void> | void): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < urls.length) {
        const url = urls[next++];
        await onResult(await this.fetchOne(url));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, urls.length) }, worker));
  }

  async fetchOne(url: string): Promise<CrawlResult> {
    try {
      const res = await this.http(url, {
        headers: { accept: 'text/html,application/xhtml+xml,text/plain,application/pdf;q=0.9,*/*;q=0.5' },
      });
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        return { ok: false, url, reason: `the server answered ${res.status}` };
      }
      const bytes = await readBody(res);
      const extracted = await this.files.prepare(
        new URL(res.url).pathname,
        bytes,
        res.headers.get('content-type') ?? '',
      );
      return { ok: true, page: { ...extracted, url, size: bytes.length } };
    } catch (error) {
      if (error instanceof OutboundHttpError || error instanceof ExtractionError)
        return { ok: false, url, reason: error.message };
      return { ok: false, url, reason: 'the download failed' };
    }
  }
}
