// The agent's live lines (issue 44): a reply cut by barge-in is followed by
// the heard part of the sentence cut, also when the cut fell between two
// sentences (the last one said was heard whole, the next had not started).
import { describe, expect, it } from 'vitest';
import type { Heard } from '../../../src/modules/voice/heard-text.js';
import { AgentLiveLines, type LiveLine } from '../../../src/modules/voice/live-lines.js';
import type { ReplySegment } from '../../../src/modules/voice/reply.js';
import type { TransportNotice } from '../../../src/modules/voice/transport.js';

const segment = (i: number, text: string, startedAtMs: number | null) =>
  ({ segment: i, text, startedAtMs }) as unknown as ReplySegment;
const heard = (parts: string[]): Heard =>
  ({ rounds: [], text: parts.filter(Boolean).join(' '), parts, interrupted: true }) as unknown as Heard;

function lines() {
  const events: LiveLine[] = [];
  const notices: TransportNotice[] = [];
  return {
    events,
    notices,
    live: new AgentLiveLines(
      (l) => events.push(l),
      (n) => notices.push(n),
    ),
  };
}

describe('agent live lines', () => {
  it('marks the sentence cut in its middle with its heard part', () => {
    const { events, live } = lines();
    live.sentenceStarted('Hello, this is Amy.');
    live.sentenceStarted('I can tell you about our hours.');
    live.replyOver(
      [segment(0, 'Hello, this is Amy.', 0), segment(1, 'I can tell you about our hours.', 2000)],
      heard(['Hello, this is Amy.', 'I can tell']),
      true,
    );
    expect(events.filter((e) => e.interrupted)).toEqual([{ role: 'agent', text: 'I can tell', interrupted: true }]);
  });

  it('marks the last sentence said when the cut fell between two sentences', () => {
    const { events, notices, live } = lines();
    live.sentenceStarted('Hello, this is Amy.');
    live.replyOver(
      [segment(0, 'Hello, this is Amy.', 0), segment(1, 'I can tell you about our hours.', null)],
      heard(['Hello, this is Amy.', '']),
      true,
    );
    expect(events.filter((e) => e.interrupted)).toEqual([
      { role: 'agent', text: 'Hello, this is Amy.', interrupted: true },
    ]);
    expect(notices.at(-1)).toEqual({
      type: 'transcript',
      role: 'agent',
      text: 'Hello, this is Amy.',
      final: true,
      interrupted: true,
    });
  });
});
