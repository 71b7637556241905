// The SSE parser against the WHATWG event-stream rules, fed in awkward chunks.
import { describe, expect, it } from 'vitest';
import { type SseFrame, SseParser } from '../../sdk/src/index.js';

function parse(chunks: string[], lastEventId = '') {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const retries: number[] = [];
  const parser = new SseParser(
    { onFrame: (f) => frames.push(f), onComment: (c) => comments.push(c), onRetry: (ms) => retries.push(ms) },
    lastEventId,
  );
  for (const chunk of chunks) parser.feed(chunk);
  return { frames, comments, retries, parser };
}

describe('SseParser', () => {
  it('parses id, event and data, and defaults the event name to message', () => {
    const { frames, parser } = parse(['id: 7\nevent: object_created\ndata: {"id":"a"}\n\ndata: plain\n\n']);
    expect(frames).toEqual([
      { id: '7', event: 'object_created', data: '{"id":"a"}' },
      { id: '7', event: 'message', data: 'plain' },
    ]);
    expect(parser.lastEventId).toBe('7');
  });

  it('joins data lines with newlines and strips exactly one leading space', () => {
    const { frames } = parse(['data:  two spaces\ndata:none\ndata\n\n']);
    expect(frames).toEqual([{ id: '', event: 'message', data: ' two spaces\nnone\n' }]);
  });

  it('handles LF, CRLF and CR line ends, also split across chunks', () => {
    const text = 'id: 1\r\nevent: a\r\ndata: x\r\n\r\nid: 2\rdata: y\r\rid: 3\ndata: z\n\n';
    const whole = parse([text]).frames;
    expect(whole.map((f) => [f.id, f.event, f.data])).toEqual([
      ['1', 'a', 'x'],
      ['2', 'message', 'y'],
      ['3', 'message', 'z'],
    ]);
    // Every possible split into two chunks, and one character at a time.
    for (let i = 1; i < text.length; i += 1) expect(parse([text.slice(0, i), text.slice(i)]).frames).toEqual(whole);
    expect(parse([...text]).frames).toEqual(whole);
  });

  it('reports comments (keep-alives) and retry, and ignores unknown fields and a bad retry', () => {
    const { frames, comments, retries } = parse([': keep-alive\n:\nretry: 2500\nretry: soon\nfoo: bar\ndata: d\n\n']);
    expect(comments).toEqual(['keep-alive', '']);
    expect(retries).toEqual([2500]);
    expect(frames).toEqual([{ id: '', event: 'message', data: 'd' }]);
  });

  it('dispatches nothing for a frame without data but keeps its id; ignores an id containing NUL', () => {
    const { frames, parser } = parse(['id: 5\nevent: ignored\n\nid: 6\0x\ndata: after\n\n']);
    expect(frames).toEqual([{ id: '5', event: 'message', data: 'after' }]);
    expect(parser.lastEventId).toBe('5');
  });

  it('waits for the blank line: an unterminated frame neither dispatches nor moves the resume point, and reset() forgets it', () => {
    const { frames, parser } = parse(['id: 9\ndata: partial\n'], '8');
    expect(frames).toEqual([]);
    expect(parser.lastEventId).toBe('8');
    parser.reset();
    parser.feed('\n');
    expect(frames).toEqual([]);
    expect(parser.lastEventId).toBe('8');
    parser.feed('id: 9\ndata: whole\n\n');
    expect(frames).toEqual([{ id: '9', event: 'message', data: 'whole' }]);
  });

  it('starts from a given last event id and lets an empty id reset it', () => {
    const { frames } = parse(['data: a\n\nid\ndata: b\n\n'], '41');
    expect(frames.map((f) => f.id)).toEqual(['41', '']);
  });
});
