// A server-sent events parser that follows the WHATWG "event stream
// interpretation" rules: lines end in CRLF, LF or CR (also across chunk
// boundaries); `field: value` loses one leading space; `data` lines join with
// "\n"; an `id` containing NUL is ignored; a blank line dispatches; a frame
// without data dispatches nothing but its `id` still counts; lines starting
// with ":" are comments (keep-alives). An `id:` line takes effect when its
// frame ends (the blank line), so a frame cut off by a dropped connection does
// not move the resume point past an event that was never delivered.

export interface SseFrame {
  /** The last event id in force when this frame was dispatched ('' when none was ever set). */
  id: string;
  /** The `event:` field, or "message" when the frame had none. */
  event: string;
  data: string;
}

export interface SseHandlers {
  onFrame(frame: SseFrame): void;
  onComment?(text: string): void;
  /** A `retry:` field: the reconnection delay the server asks for, in ms. */
  onRetry?(ms: number): void;
}

export class SseParser {
  /** The id of the last complete frame; survives across connections: it is what Last-Event-ID resumes from. */
  lastEventId: string;
  /** The id in force for the frame being read. */
  private idBuffer: string;
  private buffer = '';
  private afterCR = false;
  private data = '';
  private hasData = false;
  private event = '';

  constructor(
    private readonly handlers: SseHandlers,
    lastEventId = '',
  ) {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** Feeds decoded text; complete lines are interpreted, the rest waits for the next chunk. */
  feed(chunk: string): void {
    let text = chunk;
    // A CR that ended the previous chunk already ended its line: skip the LF of that CRLF.
    if (this.afterCR && text.startsWith('\n')) text = text.slice(1);
    this.afterCR = false;
    let start = 0;
    const whole = this.buffer + text;
    const offset = this.buffer.length;
    this.buffer = '';
    for (let i = offset; i < whole.length; i += 1) {
      const c = whole.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(whole.slice(start, i));
      if (c === 13) {
        if (i + 1 < whole.length) {
          if (whole.charCodeAt(i + 1) === 10) i += 1;
        } else {
          this.afterCR = true;
        }
      }
      start = i + 1;
    }
    this.buffer = whole.slice(start);
  }

  /** Forgets a half-received frame, as a dropped connection must (the frame is sent again on resume). */
  reset(): void {
    this.buffer = '';
    this.afterCR = false;
    this.data = '';
    this.hasData = false;
    this.event = '';
    this.idBuffer = this.lastEventId;
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.handlers.onComment?.(line.slice(1).replace(/^ /, ''));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data += this.hasData ? `\n${value}` : value;
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.handlers.onRetry?.(Number(value));
        break;
      default:
      // Unknown fields are ignored.
    }
  }

  private dispatch(): void {
    this.lastEventId = this.idBuffer;
    const frame = this.hasData ? { id: this.lastEventId, event: this.event || 'message', data: this.data } : null;
    this.data = '';
    this.hasData = false;
    this.event = '';
    if (frame) this.handlers.onFrame(frame);
  }
}
