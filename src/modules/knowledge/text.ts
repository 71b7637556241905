// Cutting text: large documents into ~200 KB slices (spec 8), documents into
// overlapping ~1,000-character chunks (the unit search returns), and questions
// into the terms full-text search looks for.

/** Collapses runs of spaces and blank lines so chunk sizes measure content. */
export function normalizeText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * Splits text into slices of at most maxBytes (UTF-8) at paragraph
 * boundaries; a paragraph longer than a slice is cut at line ends, then at
 * spaces, then anywhere. Text within the limit comes back whole.
 *
 * Linear in the text: every piece is measured once and the slice's size is
 * kept as a running sum (re-measuring the growing slice for each paragraph
 * took 10 s for 512 KiB of one-letter paragraphs).
 */
export function sliceText(text: string, maxBytes = 200 * 1024): string[] {
  const total = utf8Bytes(text);
  if (total <= maxBytes) return [text];
  const slices: string[] = [];
  let current: string[] = [];
  let currentBytes = 0;
  const close = () => {
    const slice = current.join('').trim();
    if (slice) slices.push(slice);
    current = [];
    currentBytes = 0;
  };
  for (const { piece, bytes } of splitToFit(text, maxBytes, ['\n\n', '\n', ' '], total)) {
    if (current.length && currentBytes + bytes > maxBytes) close();
    current.push(piece);
    currentBytes += bytes;
  }
  close();
  return slices;
}

/**
 * Pieces (separators kept at their ends) each within maxBytes with their
 * sizes, cut at the first separator that makes them fit. A piece is measured
 * once per separator level (at most four times in all).
 */
function splitToFit(
  text: string,
  maxBytes: number,
  separators: string[],
  bytes = utf8Bytes(text),
): Array<{ piece: string; bytes: number }> {
  if (bytes <= maxBytes) return text ? [{ piece: text, bytes }] : [];
  const [separator, ...rest] = separators;
  if (separator === undefined) {
    // No separator left: cut by characters (each at most 4 bytes).
    const out: Array<{ piece: string; bytes: number }> = [];
    const step = Math.max(1, Math.floor(maxBytes / 4));
    for (let i = 0; i < text.length; i += step) {
      const piece = text.slice(i, i + step);
      out.push({ piece, bytes: utf8Bytes(piece) });
    }
    return out;
  }
  const parts = text.split(separator);
  const out: Array<{ piece: string; bytes: number }> = [];
  const last = parts.length - 1;
  for (let i = 0; i <= last; i += 1) {
    const part = i < last ? parts[i] + separator : parts[i];
    const partBytes = utf8Bytes(part);
    if (partBytes > maxBytes) for (const fitted of splitToFit(part, maxBytes, rest, partBytes)) out.push(fitted);
    else if (part) out.push({ piece: part, bytes: partBytes });
  }
  return out;
}

export interface ChunkOptions {
  size: number;
  overlap: number;
}

/**
 * Overlapping chunks of about `size` characters. Each ends at the last
 * paragraph break, else sentence end, else space in its second half; the next
 * starts about `overlap` characters earlier, at a word boundary, so a passage
 * cut by one chunk's end is whole in the next.
 */
export function chunkText(text: string, { size, overlap }: ChunkOptions = { size: 1000, overlap: 200 }): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    if (end < text.length) end = breakPoint(text, start + Math.floor(size / 2), end);
    const chunk = text.slice(start, end).trim();
    if (chunk) chunks.push(chunk);
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    const space = text.slice(next, end).search(/\s/);
    next = space >= 0 ? next + space + 1 : end;
    start = next;
  }
  return chunks;
}

function breakPoint(text: string, min: number, end: number): number {
  const window = text.slice(min, end);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph >= 0) return min + paragraph + 2;
  let sentence = -1;
  for (const m of window.matchAll(/[.!?;:](?=\s)|\n/g)) sentence = m.index + 1;
  if (sentence > 0) return min + sentence;
  const space = window.lastIndexOf(' ');
  return space >= 0 ? min + space + 1 : end;
}

// Words too common to tell passages apart; dropping them keeps OR queries selective.
export const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does doing for from had has have how i if in into is it its ' +
    'me my no not of on or our so than that the their them then there these they this those to too was we were what ' +
    'when where which while who whom why will with would you your about after again all also am any because before ' +
    'being below between both during each few further he her here hers him his itself just more most must myself ' +
    'nor now off once only other ought ours out over own same she should some such theirs themselves through under ' +
    'until up very yours yourself use using used get want need way make one'
  ).split(' '),
);

/** The distinct search terms of a question: lower-cased letters and digits, stopwords dropped (all kept if nothing else is left). */
export function queryTerms(text: string, max = 32): string[] {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length < 64);
  const unique = [...new Set(words)];
  const content = unique.filter((w) => !STOPWORDS.has(w));
  return (content.length ? content : unique).slice(0, max);
}
