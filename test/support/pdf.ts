// Hand-written PDFs for tests of the inflation caps: one page whose content
// stream is deflated (once or twice), with a /Length that may lie.
import { deflateSync } from 'node:zlib';

export interface PdfOptions {
  /** Deflate the content this many times (each a /FlateDecode in the filter chain); default 1. */
  deflations?: number;
  /** Write this /Length instead of the true one. */
  declaredLength?: number;
}

/** A one-page PDF showing `text`, its content stream followed by `padding` bytes of spaces (legal in content streams). */
export function buildPdf(text: string, padding = 0, options: PdfOptions = {}): Buffer {
  const content = Buffer.concat([Buffer.from(`BT /F1 12 Tf 40 740 Td (${text}) Tj ET\n`), Buffer.alloc(padding, 0x20)]);
  const deflations = options.deflations ?? 1;
  let stream: Buffer = content;
  for (let i = 0; i < deflations; i += 1) stream = deflateSync(stream, { level: 9 });
  const filter = deflations === 0 ? '' : `/Filter [${Array(deflations).fill('/FlateDecode').join(' ')}] `;
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from(
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    ),
    Buffer.concat([
      Buffer.from(`<< ${filter}/Length ${options.declaredLength ?? stream.length} >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let length = parts[0].length;
  objects.forEach((body, i) => {
    offsets.push(length);
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(object);
    length += object.length;
  });
  const xref = [
    `xref\n0 ${objects.length + 1}\n`,
    '0000000000 65535 f \n',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`),
  ].join('');
  parts.push(
    Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`),
  );
  return Buffer.concat(parts);
}
