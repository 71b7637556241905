// An event as the broker fans it out: parsed and framed at most once per
// instance, however many subscribers receive it.
import type { EventRow } from './store.js';

export class StreamEvent {
  readonly id: number;
  readonly userId: string;
  readonly type: string;
  private readonly payloadText: string;
  private parsed: Record<string, unknown> | undefined;
  private framed: Buffer | undefined;

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
        this.parsed = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
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
  get frame(): Buffer {
    this.framed ??= Buffer.from(`id: ${this.id}\nevent: ${this.type}\ndata: ${this.payloadText}\n\n`);
    return this.framed;
  }
}
