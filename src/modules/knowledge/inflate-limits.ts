// Caps on decompression before a file reaches its parser. A DOCX is a zip and
// a PDF holds deflated streams; a few kilobytes can inflate to gigabytes (one
// 2.3 MB upload of such DOCX files once ran the process out of memory). The
// parsers inflate into buffers outside the JavaScript heap, where the
// worker's heap limit does not reach, so the inflated size is checked here
// first: from what the archive declares (refused before anything is
// inflated) and then by inflating with zlib's own output cap (declared sizes
// can lie), so no more than the limit plus one byte is ever produced.
import { constants as bufferConstants } from 'node:buffer';
import { constants, inflateRawSync, inflateSync } from 'node:zlib';

/** A file that would inflate past the limit; `what` says which part. */
export class InflateLimitError extends Error {
  constructor(
    readonly what: string,
    readonly limit: number,
  ) {
    super(`${what} inflates to more than ${limit} bytes (the limit)`);
  }
}

/** A malformed archive (the DOCX parser would refuse it too). */
export class ArchiveFormatError extends Error {}

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

const EOCD = 0x06054b50;
const ZIP64_EOCD_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL_HEADER = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const MAX_ENTRIES = 10_000;

/** The zip's entries as its central directory declares them. */
export function readZipDirectory(zip: Buffer): ZipEntry[] {
  // The end-of-central-directory record: 22 bytes plus a comment of at most 65,535.
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 65_535); i -= 1) {
    if (zip.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ArchiveFormatError('not a zip archive (no end of central directory)');
  let count = zip.readUInt16LE(eocd + 10);
  let offset = zip.readUInt32LE(eocd + 16);
  if ((count === 0xffff || offset === 0xffffffff) && eocd >= 20 && zip.readUInt32LE(eocd - 20) === ZIP64_EOCD_LOCATOR) {
    const at = Number(zip.readBigUInt64LE(eocd - 20 + 8));
    if (at + 56 > zip.length || zip.readUInt32LE(at) !== ZIP64_EOCD)
      throw new ArchiveFormatError('a broken zip64 directory');
    count = Number(zip.readBigUInt64LE(at + 32));
    offset = Number(zip.readBigUInt64LE(at + 48));
  }
  if (count > MAX_ENTRIES) throw new ArchiveFormatError(`more than ${MAX_ENTRIES} entries`);
  const entries: ZipEntry[] = [];
  let at = offset;
  for (let i = 0; i < count; i += 1) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL_HEADER)
      throw new ArchiveFormatError('a broken central directory');
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const entry: ZipEntry = {
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      method: zip.readUInt16LE(at + 10),
      compressedSize: zip.readUInt32LE(at + 20),
      uncompressedSize: zip.readUInt32LE(at + 24),
      localHeaderOffset: zip.readUInt32LE(at + 42),
    };
    // Zip64: sizes and offset that do not fit 32 bits are in the extra field 0x0001, in this order.
    let extra = at + 46 + nameLength;
    const extraEnd = Math.min(extra + extraLength, zip.length);
    while (extra + 4 <= extraEnd) {
      const id = zip.readUInt16LE(extra);
      const size = zip.readUInt16LE(extra + 2);
      if (id === 0x0001) {
        let field = extra + 4;
        const read64 = () => {
          if (field + 8 > extraEnd) throw new ArchiveFormatError('a broken zip64 field');
          const value = Number(zip.readBigUInt64LE(field));
          field += 8;
          return value;
        };
        if (entry.uncompressedSize === 0xffffffff) entry.uncompressedSize = read64();
        if (entry.compressedSize === 0xffffffff) entry.compressedSize = read64();
        if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = read64();
      }
      extra += 4 + size;
    }
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * Refuses a zip (a DOCX) whose entries together inflate past `limit`: first
 * by the sizes its directory declares, without inflating anything; then by
 * inflating each entry with zlib's output capped at what is left of the
 * limit, so a lying directory is caught after at most `limit` bytes.
 */
export function checkZipInflatedSize(zip: Buffer, limit: number, what = 'the archive'): void {
  const entries = readZipDirectory(zip);
  let declared = 0;
  for (const entry of entries) declared += entry.uncompressedSize;
  if (declared > limit) throw new InflateLimitError(what, limit);
  let left = limit;
  for (const entry of entries) {
    const at = entry.localHeaderOffset;
    if (at + 30 > zip.length || zip.readUInt32LE(at) !== LOCAL_HEADER)
      throw new ArchiveFormatError(`a broken entry (${entry.name})`);
    const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
    const data = zip.subarray(start, Math.min(zip.length, start + entry.compressedSize));
    let produced: number;
    if (entry.method === 0) produced = data.length;
    else if (entry.method === 8)
      produced = inflatedLength(() =>
        inflateRawSync(data, { maxOutputLength: cap(left), finishFlush: constants.Z_SYNC_FLUSH }),
      );
    else throw new ArchiveFormatError(`entry ${entry.name} uses compression method ${entry.method}`);
    if (produced > left) throw new InflateLimitError(what, limit);
    left -= produced;
  }
}

/**
 * Refuses a PDF whose deflated streams together inflate past `limit`. Every
 * stream whose dictionary names FlateDecode is inflated from its first byte
 * (the deflate data ends itself, whatever /Length or `endstream` claim), once
 * per FlateDecode in its filter chain, with the output capped at what is left
 * of the limit. Image streams are left out: text extraction never decodes them.
 * Other filters (LZW, run-length) are bounded by the worker's limits alone.
 */
export function checkPdfInflatedSize(pdf: Buffer, limit: number, what = 'the PDF'): void {
  const text = pdf.toString('latin1');
  const keyword = /(?<![A-Za-z])stream(?:\r\n|\r|\n)/g;
  let left = limit;
  for (let match = keyword.exec(text); match; match = keyword.exec(text)) {
    const dictStart = Math.max(text.lastIndexOf(' obj', match.index), match.index - 4096, 0);
    const dict = text.slice(dictStart, match.index);
    const filters = (dict.match(/\/FlateDecode\b|\/Fl\b/g) ?? []).length;
    if (filters === 0 || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    let data: Buffer = pdf.subarray(match.index + match[0].length);
    for (let pass = 0; pass < filters; pass += 1) {
      let inflated: Buffer;
      try {
        inflated = inflateSync(data, { maxOutputLength: cap(left), finishFlush: constants.Z_SYNC_FLUSH });
      } catch (error) {
        if (isOutputCap(error)) throw new InflateLimitError(what, limit);
        break; // corrupt data: the parser decides
      }
      if (inflated.length > left) throw new InflateLimitError(what, limit);
      if (pass === filters - 1) left -= inflated.length;
      data = inflated;
    }
    keyword.lastIndex = match.index + match[0].length;
  }
}

/** zlib's output cap for `left` bytes still allowed: one byte more, so passing the limit is seen. */
const cap = (left: number) => Math.min(left + 1, bufferConstants.MAX_LENGTH);

function inflatedLength(inflate: () => Buffer): number {
  try {
    return inflate().length;
  } catch (error) {
    if (isOutputCap(error)) return Number.POSITIVE_INFINITY;
    throw new ArchiveFormatError('a corrupt compressed entry');
  }
}

const isOutputCap = (error: unknown) =>
  (error as { code?: string })?.code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError;
