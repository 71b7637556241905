// An event as the broker fans it out: parsed and framed at most once per
// instance, however many subscribers receive it.
import type { EventRow } from './store.js';

/**
 * Bytes for the wire: one or more server-sent event frames, built once and
 * shared by every stream that sends them. `chunked` is the same bytes as one
 * HTTP/1.1 chunk (size line, frames, CRLF), so a stream on a chunked response
 * writes them to its socket as they are; `raw` is a view into the same memory.
 */
export class Frames {
  readonly chunked: Buffer;
  readonly raw: Buffer;

  private constructor(length: number, fill: (into: Buffer, at: number) => void) {
    const head = `${length.toString(16)}\r\n`;
    const buf = Buffer.allocUnsafe(head.length + length + 2);
    buf.write(head, 0, 'latin1');
    fill(buf, head.length);
    buf.write('\r\n', head.length + length, 'latin1');
    this.chunked = buf;
    this.raw = buf.subarray(head.length, head.length + length);
  }

  static text(text: string): Frames {
    return new Frames(Buffer.byteLength(text), (into, at) => into.write(text, at, 'utf8'));
  }

  /** Several frames as one write (one chunk). */
  static join(list: readonly Frames[]): Frames {
    if (list.length === 1) return list[0];
    let length = 0;
    for (const f of list) length += f.raw.length;
    return new Frames(length, (into, at) => {
      for (const f of list) at += f.raw.copy(into, at);
    });
  }

  get byteLength(): number {
    return this.chunked.length;
  }

  toString(): string {
    return this.raw.toString('utf8');
  }
}

export class StreamEvent {
  readonly id: number;
  readonly userId: string;
  readonly type: string;
  private readonly payloadText: string;
  private parsed: Record<string, unknown> | undefined;
  private framed: Frames | undefined;

  constructor(row: EventRow) {
    this.id = row.id;
    this.userId = row.user_id;
    this.type = row.type;
    this.payloadText = row.payload;
  }

  /** The payload's fields (for filters); parsed on first use. */
  get payload(): Record<string, unknown> {
    if (this.parsed === undefined) {
      try {
        const value = JSON.parse(this.payloadText) as unknown;
        this.parsed =
          value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
      } catch {
        this.parsed = {};
      }
    }
    return this.parsed;
  }

  /**
   * The server-sent event frame, encoded once: every stream writes the same
   * bytes instead of encoding the text again. The stored payload is
   * JSON.stringify output, which never holds a raw line break, so it is one
   * `data:` line as it is.
   */
  get frames(): Frames {
    this.framed ??= Frames.text(`id: ${this.id}\nevent: ${this.type}\ndata: ${this.payloadText}\n\n`);
    return this.framed;
  }

  /** Roughly what keeping this event costs (its frame, its payload text, the object). */
  get retainedBytes(): number {
    return this.frames.byteLength + this.payloadText.length + 160;
  }
}
