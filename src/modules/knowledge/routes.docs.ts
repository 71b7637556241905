// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  listKnowledgeBases: {
    summary: 'List knowledge bases',
    description: "The caller's knowledge bases, oldest first, without their documents.",
  },
  createKnowledgeBase: {
    summary: 'Create a knowledge base',
    description: 'Creates an empty knowledge base with empty metadata.',
  },
  getKnowledgeBase: {
    summary: 'Read a knowledge base and its documents',
    description: 'Documents have numeric ids, oldest first.',
  },
  updateKnowledgeBase: {
    summary: 'Rename or describe a knowledge base',
    description: "Updates the base's own fields (name, description); its documents are unchanged.",
  },
  deleteKnowledgeBase: {
    summary: 'Delete a knowledge base',
    description:
      'Removes every document from the search indexes (full-text and vectors), then the documents, then the base.',
  },
  crawlKnowledgeLinks: {
    summary: 'Crawl links into documents',
    description:
      'Downloads each URL (http or https; 4 at a time, 15 s and 10 MB each, at most 5 redirects) and creates a document from its readable text, in batches of 5. ' +
      'Addresses that are not public (loopback, private, link-local, metadata) are refused after DNS resolution and on every redirect. ' +
      'Pages are read with the same limits per file as uploads. URLs that fail are listed in `skipped` with the reason. ' +
      "Pages count toward the user's knowledge quota: a user already at it is refused with 413 `quota_exceeded`; a batch that would pass it is skipped, each URL with the quota as reason.",
  },
  searchKnowledgeBase: {
    summary: 'Search a knowledge base',
    description:
      'Up to 5 passages, best first. Full-text search, fused by reciprocal rank fusion with vector search when an embeddings provider is configured (EMBEDDINGS_URL).',
  },
  deleteKnowledgeDocument: {
    summary: 'Delete a document',
    description: 'Removes the document from the search indexes, then the document.',
  },
});

/** The upload route's doc, which names the configured limits. */
export function uploadDocs(limits: { maxFiles: number; maxFileBytes: number }) {
  return {
    operationId: 'uploadKnowledgeDocuments',
    summary: 'Upload files as documents',
    description:
      `multipart/form-data with one part per file, each named \`files\` (at most ${limits.maxFiles} files of ${limits.maxFileBytes} bytes). ` +
      'Text, Markdown, CSV, JSON, HTML, PDF (text layer) and DOCX; the type is sniffed from the content. ' +
      'A file that cannot be read refuses the whole upload (415 unsupported type, 400 unreadable; the answer names the file in `message` and `file`) and nothing is added. ' +
      'Files are read in worker threads with limits per file: a DOCX or PDF whose compressed content inflates past the limit, or text past the limit, is a 413 `payload_too_large`; ' +
      'a file that takes longer or more memory to read than allowed is a 422 `file_too_complex`. ' +
      "The user's knowledge quota (documents, chunks, bytes over all bases) is checked before anything is written: past it, 413 `quota_exceeded` with `used`, `allowed` and `adding`. " +
      'Text over about 200 KB becomes several documents of about 200 KB, cut at paragraph boundaries and named "name (2/3)".',
  };
}
