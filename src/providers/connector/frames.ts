// Incremental parsers for the two streaming formats a connector may answer
// with. Each takes text as it arrives and returns the frames it completed;
// nothing is kept but the unfinished tail, so a stream is never held whole.

export interface FrameParser {
  /** Feeds the next piece of text; returns the data of the frames it completed. */
  push(text: string): string[];
  /** The stream ended: the frame still open, if any (a last line without newline). */
  end(): string[];
  /** Characters held for the frame not yet complete (bounds a frame's size). */
  pending(): number;
}

/**
 * Server-sent events as the HTML spec parses them: lines end in CRLF, LF or
 * CR; `data:` lines of one event are joined with LF; a blank line dispatches;
 * comments and other fields are ignored. An event without data is no frame.
 */
export function createSseParser(): FrameParser {
  let tail = '';
  let data: string[] = [];
  let hasData = false;
  const line = (text: string, out: string[]) => {
    if (text === '') {
      if (hasData) out.push(data.join('\n'));
      data = [];
      hasData = false;
      return;
    }
    if (text.charCodeAt(0) === 58 /* : */) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    if (field !== 'data') return;
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    data.push(value);
    hasData = true;
  };
  return {
    push(text) {
      const out: string[] = [];
      let buffer = tail + text;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        if (c === 13 && i === buffer.length - 1) break; // maybe the first half of CRLF: wait for the next piece
        line(buffer.slice(start, i), out);
        if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
      buffer = buffer.slice(start);
      tail = buffer;
      return out;
    },
    end() {
      // An event is dispatched only by a blank line: an unterminated last event is dropped, as EventSource does.
      tail = '';
      return [];
    },
    pending: () => tail.length + data.reduce((n, d) => n + d.length, 0),
  };
}

/** Newline-delimited JSON (NDJSON, JSON Lines): one frame per non-blank line. */
export function createNdjsonParser(): FrameParser {
  let tail = '';
  return {
    push(text) {
      const out: string[] = [];
      const buffer = tail + text;
      let start = 0;
      let i: number;
      while ((i = buffer.indexOf('\n', start)) !== -1) {
        const frame = buffer.slice(start, i).trim();
        if (frame !== '') out.push(frame);
        start = i + 1;
      }
      tail = buffer.slice(start);
      return out;
    },
    end() {
      const frame = tail.trim();
      tail = '';
      return frame === '' ? [] : [frame];
    },
    pending: () => tail.length,
  };
}

/** The parser for a response's media type: SSE for text/event-stream, NDJSON otherwise. */
export function parserFor(contentType: string | null): FrameParser {
  return (contentType ?? '').toLowerCase().startsWith('text/event-stream') ? createSseParser() : createNdjsonParser();
}
