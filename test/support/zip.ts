// A small zip writer for test fixtures: DOCX files built by hand, including
// zip bombs and archives whose central directory lies about sizes.
import { crc32, deflateRawSync } from 'node:zlib';

export interface ZipEntryInput {
  name: string;
  data: Buffer | string;
  /** 8 deflate (default) or 0 stored. */
  method?: 0 | 8;
  /** Claim this inflated size in the headers instead of the true one. */
  declaredSize?: number;
  /** Already deflated data (raw deflate) for `data`'s inflated form: lets a test make a bomb without holding it inflated twice. */
  deflated?: Buffer;
}

export function buildZip(entries: ZipEntryInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data) : entry.data;
    const method = entry.method ?? 8;
    const stored = method === 0 ? data : (entry.deflated ?? deflateRawSync(data));
    const name = Buffer.from(entry.name);
    const size = entry.declaredSize ?? data.length;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, stored);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';
const DOC_HEAD =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>';
const DOC_TAIL = '</w:body></w:document>';

/** A DOCX whose body is `body` (WordprocessingML paragraphs), written by hand. */
export function buildDocx(body: string, options: { declaredSize?: number } = {}): Buffer {
  const document = DOC_HEAD + body + DOC_TAIL;
  return buildZip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES },
    { name: '_rels/.rels', data: RELS },
    { name: 'word/document.xml', data: document, declaredSize: options.declaredSize },
  ]);
}

export const paragraph = (text: string) => `<w:p><w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

/**
 * A zip-bomb DOCX: one paragraph, then `inflatedBytes` of paragraphs of one
 * repeated word, deflated about 1,000 to 1. `declaredSize` makes the
 * directory lie (claim a small size) so only inflating can catch it.
 */
export function buildDocxBomb(inflatedBytes: number, options: { declaredSize?: number } = {}): Buffer {
  const unit = paragraph('boom boom boom boom boom boom boom boom');
  const body = paragraph('A bomb.') + unit.repeat(Math.ceil(inflatedBytes / unit.length));
  return buildDocx(body, options);
}
