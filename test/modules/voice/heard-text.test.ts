import { describe, expect, it } from 'vitest';
import { cutByShare, heardText } from '../../../src/modules/voice/heard-text.js';
import { History } from '../../../src/modules/voice/history.js';
import { SentenceSplitter } from '../../../src/modules/voice/sentences.js';

describe('heard-text rule', () => {
  it('cuts a sentence by the share of its audio played, on a whole word', () => {
    expect(cutByShare('We open at nine every morning.', 0.4)).toBe('We open at');
    expect(cutByShare('We open at nine every morning.', 0.5)).toBe('We open at nine');
    expect(cutByShare('We open at nine every morning.', 0)).toBe('');
    expect(cutByShare('We open at nine every morning.', 1)).toBe('We open at nine every morning.');
    expect(cutByShare('Hello', 0.5)).toBe('');
  });

  it('hears whole played segments, the played share of the cut one, nothing after', () => {
    const heard = heardText([
      { text: 'Let me check.', audioMs: 600, playedMs: 600, round: 0 },
      { text: 'We open at nine every morning.', audioMs: 1200, playedMs: 480, round: 1 },
      { text: 'We close at five.', audioMs: 800, playedMs: 0, round: 1 },
    ]);
    expect(heard.text).toBe('Let me check. We open at');
    expect(heard.rounds).toEqual([
      { round: 0, text: 'Let me check.' },
      { round: 1, text: 'We open at' },
    ]);
    expect(heard.parts).toEqual(['Let me check.', 'We open at', '']);
    expect(heard.interrupted).toBe(true);
    expect(heard.unheard).toBe('nine every morning. We close at five.');
  });

  it('a reply played to its last mark is heard whole and not interrupted; pending text is unheard', () => {
    expect(heardText([{ text: 'Hi there.', audioMs: 400, playedMs: 400, round: 0 }])).toEqual({
      rounds: [{ round: 0, text: 'Hi there.' }],
      text: 'Hi there.',
      parts: ['Hi there.'],
      interrupted: false,
      unheard: '',
    });
    expect(heardText([{ text: 'Hi there.', audioMs: 400, playedMs: 400, round: 0 }], 'And more.').unheard).toBe(
      'And more.',
    );
  });
});

describe('History', () => {
  it('keeps what the caller said and heard, marks a cut line, keeps tool calls that ran', () => {
    const history = new History('You are helpful.');
    history.addCaller('When do you open?');
    history.addAgent(
      [
        {
          text: '',
          toolCalls: [
            {
              call: {
                id: 'c1',
                type: 'function',
                function: { name: 'search_knowledge', arguments: '{"query":"open"}' },
              },
              result: '{"matches":[]}',
            },
          ],
        },
        { text: 'We open at', toolCalls: [] },
      ],
      true,
    );
    expect(history.lastAgentInterrupted).toBe(true);
    history.addCaller('Sorry, go on.');
    expect(history.messages()).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'When do you open?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'search_knowledge', arguments: '{"query":"open"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"matches":[]}' },
      { role: 'assistant', content: 'We open at…' },
      { role: 'user', content: 'Sorry, go on.' },
    ]);
  });

  it('drops an agent turn of which nothing was heard, and the oldest entries past its size', () => {
    const history = new History('S', 2);
    history.addAgent([{ text: '', toolCalls: [] }], true);
    history.addCaller('a');
    history.addCaller('b');
    history.addCaller('c');
    expect(history.messages()).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'b' },
      { role: 'user', content: 'c' },
    ]);
  });
});

describe('SentenceSplitter', () => {
  it('cuts streamed text into sentences, not at abbreviations or decimals', () => {
    const s = new SentenceSplitter();
    const out = [...s.push('Hello! Dr. Smith is in at 9.30 today'), ...s.push('. Is that ok? Yes')];
    expect(out).toEqual(['Hello!', 'Dr. Smith is in at 9.30 today.', 'Is that ok?']);
    expect(s.flush()).toBe('Yes');
    expect(s.flush()).toBeNull();
  });
});
