// Reads the text of a file with the field's own extractors. The type comes
// from the bytes (file-type for binary formats; UTF-8 text is then told apart
// by its content, and by its name only where content cannot tell: CSV and
// Markdown), never from what the client claims.
//
// The extractors are loaded on first use: together they cost about 30 MB and
// 0.3 s at start-up, and many servers never receive a file.
import { ArchiveFormatError, InflateLimitError, checkPdfInflatedSize, checkZipInflatedSize } from './inflate-limits.js';
import { chunkText, normalizeText, sliceText } from './text.js';

export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * Why a file could not be read: `unsupported` (415), `unreadable` (400),
 * `too_large` (413: it inflates or yields more than the limits allow) or
 * `too_complex` (422: it took more time or memory than a file may).
 */
export class ExtractionError extends Error {
  constructor(
    readonly kind: 'unsupported' | 'unreadable' | 'too_large' | 'too_complex',
    message: string,
  ) {
    super(message);
  }
}

export interface ExtractedText {
  mimeType: string;
  text: string;
  /** A title found in the content (HTML <title>), if any. */
  title?: string;
}

/** Caps on what one file may inflate to and yield. */
export interface ExtractionLimits {
  /** Bytes a DOCX's zip entries, or a PDF's deflated streams, may inflate to together. */
  maxInflatedBytes: number;
  /** UTF-8 bytes of text a file may yield. */
  maxTextBytes: number;
}

const unlimited: ExtractionLimits = {
  maxInflatedBytes: Number.MAX_SAFE_INTEGER,
  maxTextBytes: Number.MAX_SAFE_INTEGER,
};

/** The text of a file; `declaredType` (a Content-Type header) only helps classify text, never binaries. */
export async function extractText(
  name: string,
  bytes: Buffer,
  declaredType = '',
  limits: ExtractionLimits = unlimited,
): Promise<ExtractedText> {
  const extracted = await extractWithinInflateLimit(name, bytes, declaredType, limits);
  if (Buffer.byteLength(extracted.text) > limits.maxTextBytes)
    throw new ExtractionError('too_large', `yields more than ${limits.maxTextBytes} bytes of text (the limit)`);
  return extracted;
}

async function extractWithinInflateLimit(
  name: string,
  bytes: Buffer,
  declaredType: string,
  limits: ExtractionLimits,
): Promise<ExtractedText> {
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  if (detected?.mime === 'application/pdf') {
    checkInflated(() => checkPdfInflatedSize(bytes, limits.maxInflatedBytes), 'PDF');
    return { mimeType: 'application/pdf', text: await pdfText(bytes) };
  }
  if (detected?.mime === DOCX) {
    checkInflated(() => checkZipInflatedSize(bytes, limits.maxInflatedBytes), 'DOCX');
    return { mimeType: DOCX, text: await docxText(bytes) };
  }
  if (detected)
    throw new ExtractionError(
      'unsupported',
      `${detected.mime} is not a supported type (text, Markdown, CSV, JSON, HTML, PDF, DOCX)`,
    );

  if (bytes.includes(0)) throw new ExtractionError('unsupported', 'binary content of an unknown type');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ExtractionError('unsupported', 'not UTF-8 text');
  }
  const lowerName = name.toLowerCase();
  const extension = lowerName.includes('.') ? lowerName.slice(lowerName.lastIndexOf('.') + 1) : '';
  const start = text.trimStart().slice(0, 512).toLowerCase();

  if (
    /^(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/.test(start) ||
    ((extension === 'html' || extension === 'htm' || declaredType.includes('html')) && start.startsWith('<'))
  ) {
    const html = await htmlText(text);
    return { mimeType: 'text/html', text: requireText(html.text), title: html.title };
  }
  if (extension === 'json' || declaredType.includes('json') || /^[[{]/.test(start)) {
    try {
      JSON.parse(text);
      return { mimeType: 'application/json', text: requireText(text) };
    } catch {
      if (extension === 'json') throw new ExtractionError('unreadable', 'not valid JSON');
    }
  }
  if (extension === 'csv' || declaredType.includes('csv')) return { mimeType: 'text/csv', text: requireText(text) };
  if (extension === 'md' || extension === 'markdown' || declaredType.includes('markdown'))
    return { mimeType: 'text/markdown', text: requireText(text) };
  return { mimeType: 'text/plain', text: requireText(text) };
}

function checkInflated(check: () => void, kind: string): void {
  try {
    check();
  } catch (error) {
    if (error instanceof InflateLimitError)
      throw new ExtractionError(
        'too_large',
        `its compressed content inflates to more than ${error.limit} bytes (the limit)`,
      );
    if (error instanceof ArchiveFormatError)
      throw new ExtractionError('unreadable', `not a readable ${kind} (${error.message})`);
    throw error;
  }
}

/** One slice of a file's text (spec 8: about 200 KB each) and its search chunks. */
export interface PreparedSlice {
  text: string;
  bytes: number;
  chunks: string[];
}

export interface PreparedText {
  mimeType: string;
  title?: string;
  slices: PreparedSlice[];
}

export interface PrepareOptions extends ExtractionLimits {
  sliceBytes: number;
  chunkSize: number;
  chunkOverlap: number;
}

/** Reads a file, then slices and chunks its text: all the CPU work of ingesting it (run in a worker thread by ExtractionPool). */
export async function prepareFile(
  name: string,
  bytes: Buffer,
  declaredType: string,
  options: PrepareOptions,
): Promise<PreparedText> {
  const { mimeType, text, title } = await extractText(name, bytes, declaredType, options);
  const slices = sliceText(text, options.sliceBytes).map((slice) => ({
    text: slice,
    bytes: Buffer.byteLength(slice),
    chunks: chunkText(slice, { size: options.chunkSize, overlap: options.chunkOverlap }),
  }));
  return { mimeType, ...(title ? { title } : {}), slices };
}

function requireText(text: string): string {
  const normalized = normalizeText(text);
  if (!normalized) throw new ExtractionError('unreadable', 'contains no text');
  return normalized;
}

async function pdfText(bytes: Buffer): Promise<string> {
  let text: string;
  try {
    const { extractText: extractPdfText, getDocumentProxy } = await import('unpdf');
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const pages = await extractPdfText(pdf, { mergePages: false });
    text = pages.text.join('\n\n');
    await pdf.destroy();
  } catch (error) {
    throw new ExtractionError(
      'unreadable',
      `not a readable PDF (${error instanceof Error ? error.message : 'parse error'})`,
    );
  }
  const normalized = normalizeText(text);
  if (!normalized) throw new ExtractionError('unreadable', 'a PDF without a text layer (scanned pages are not read)');
  return normalized;
}

async function docxText(bytes: Buffer): Promise<string> {
  let text: string;
  try {
    const { default: mammoth } = await import('mammoth');
    text = (await mammoth.extractRawText({ buffer: bytes })).value;
  } catch (error) {
    throw new ExtractionError(
      'unreadable',
      `not a readable DOCX (${error instanceof Error ? error.message : 'parse error'})`,
    );
  }
  return requireText(text);
}

const BLOCKS = new Set([
  'P',
  'DIV',
  'SECTION',
  'ARTICLE',
  'LI',
  'UL',
  'OL',
  'PRE',
  'BLOCKQUOTE',
  'TABLE',
  'TR',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'FOOTER',
  'DL',
  'DT',
  'DD',
  'FIGURE',
  'MAIN',
]);
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'IFRAME']);

/** The readable text of a page: Readability's article when it finds one, else the body; paragraphs kept apart. */
export async function htmlText(html: string): Promise<{ text: string; title?: string }> {
  const [{ parseHTML }, { Readability }] = await Promise.all([import('linkedom'), import('@mozilla/readability')]);
  const { document } = parseHTML(html);
  const title = document.title?.trim() || undefined;
  let article: { content?: string | null; title?: string | null } | null = null;
  try {
    article = new Readability(document as unknown as Document).parse();
  } catch {
    article = null;
  }
  const root = article?.content
    ? parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body
    : parseHTML(html).document.body;
  const out: string[] = [];
  const walk = (node: Node) => {
    if (node.nodeType === 3) {
      out.push(node.textContent ?? '');
      return;
    }
    if (node.nodeType !== 1) return;
    const tag = (node as Element).tagName.toUpperCase();
    if (SKIPPED.has(tag)) return;
    if (tag === 'BR') out.push('\n');
    const block = BLOCKS.has(tag);
    if (block) out.push('\n\n');
    for (const child of Array.from(node.childNodes)) walk(child);
    if (block) out.push('\n\n');
  };
  if (root) walk(root as unknown as Node);
  return { text: out.join('').replace(/[ \t]*\n[ \t]*/g, '\n'), title: article?.title?.trim() || title };
}
