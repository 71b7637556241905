// The incremental SSE and NDJSON parsers: the same frames however the text is cut into pieces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createNdjsonParser, createSseParser, parserFor } from '../../../src/providers/connector/frames.js';

const feed = (parser: ReturnType<typeof createSseParser>, pieces: string[]) => [
  ...pieces.flatMap((p) => parser.push(p)),
  ...parser.end(),
];

/** Cuts text at the given fractions. */
function cut(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => Math.floor(p * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let start = 0;
  for (const i of at) {
    pieces.push(text.slice(start, i));
    start = i;
  }
  pieces.push(text.slice(start));
  return pieces;
}

describe('SSE parser', () => {
  const text =
    ': hello\n\nevent: record\nid: 1\ndata: {"a":1}\n\ndata: {"b":\r\ndata: 2}\r\n\r\nretry: 10\ndata\n\ndata: last\rdata:  two spaces\r\r: no data\n\nid: 9\n\n';
  const expected = ['{"a":1}', '{"b":\n2}', '', 'last\n two spaces'];

  it('dispatches on blank lines, joins data lines with LF, handles CR, LF and CRLF, ignores comments and events without data', () => {
    expect(feed(createSseParser(), [text])).toEqual(expected);
  });

  it('gives the same frames however the stream is cut (CRLF split included)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), (points) => {
        expect(feed(createSseParser(), cut(text, points))).toEqual(expected);
      }),
    );
    expect(feed(createSseParser(), text.split(''))).toEqual(expected);
  });

  it('drops an event the stream ends inside (no blank line), as EventSource does, and reports what it holds', () => {
    const parser = createSseParser();
    expect(parser.push('data: {"a":1}\n\ndata: {"unfinished"')).toEqual(['{"a":1}']);
    expect(parser.pending()).toBeGreaterThan(10);
    expect(parser.end()).toEqual([]);
  });
});

describe('NDJSON parser', () => {
  const text = '{"a":1}\n\n  {"b":2}  \r\nnot json\n{"c":3}';
  const expected = ['{"a":1}', '{"b":2}', 'not json', '{"c":3}'];

  it('one frame per non-blank line, the last line without newline included', () => {
    expect(feed(createNdjsonParser(), [text])).toEqual(expected);
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), (points) => {
        expect(feed(createNdjsonParser(), cut(text, points))).toEqual(expected);
      }),
    );
  });

  it('is chosen for anything but text/event-stream', () => {
    expect(feed(parserFor('application/x-ndjson'), ['{"a":1}\n'])).toEqual(['{"a":1}']);
    expect(feed(parserFor(null), ['{"a":1}\n'])).toEqual(['{"a":1}']);
    expect(feed(parserFor('text/event-stream; charset=utf-8'), ['{"a":1}\n'])).toEqual([]);
  });
});
