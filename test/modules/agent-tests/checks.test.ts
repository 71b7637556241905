// The expectations on a conversation, as pure logic: partial matches, order,
// latency and analysis, each failing with what was seen.
import { describe, expect, it } from 'vitest';
import { type Conversation, normalize, partialMatch, runChecks } from '../../../src/modules/agent-tests/checks.js';

const conversation: Conversation = {
  transcript: [
    { role: 'agent', text: 'Hello!' },
    { role: 'caller', text: 'Hi' },
    { role: 'agent', text: 'Opening hours: 9-5.', latencyMs: 420 },
    { role: 'caller', text: 'Thanks' },
    { role: 'agent', text: 'Bye.', latencyMs: 1300 },
  ],
  toolCalls: [{ name: 'lookup', arguments: { order: { id: 42, items: ['a'] }, city: 'Paris' }, result: {} }],
  outcome: 'completed',
  reason: 'agent_ended',
  path: ['a', 'b', 'c'],
  variables: { size: 'large', count: 2 },
  analysis: { success: true, data: { intent: 'hours', score: 4 } },
};

describe('runChecks', () => {
  it('matches arguments partially, recursively, strings case-insensitively', () => {
    expect(partialMatch({ order: { id: 42 } }, conversation.toolCalls[0]!.arguments)).toBe(true);
    expect(partialMatch({ city: 'paris' }, { city: 'Paris', extra: 1 })).toBe(true);
    expect(partialMatch({ order: { id: 43 } }, conversation.toolCalls[0]!.arguments)).toBe(false);
    expect(partialMatch({ order: { items: ['a', 'b'] } }, conversation.toolCalls[0]!.arguments)).toBe(false);
    expect(partialMatch({ count: '2' }, { count: 2 })).toBe(true);
    expect(partialMatch({ missing: null }, {})).toBe(false);
  });

  it('ignores case, punctuation and spacing in phrases', () => {
    expect(normalize('Opening  hours: 9-5!')).toBe('opening hours 9 5');
    const [says, never] = runChecks({ says: ['opening hours 9 5'], neverSays: ['BYE'] }, conversation);
    expect(says!.passed).toBe(true);
    expect(never).toMatchObject({ passed: false, actual: 'Bye.' });
  });

  it('takes the path in order with others between, and fails it out of order', () => {
    expect(runChecks({ path: ['a', 'c'] }, conversation)[0]!.passed).toBe(true);
    expect(runChecks({ path: ['c', 'a'] }, conversation)[0]).toMatchObject({ passed: false, actual: ['a', 'b', 'c'] });
  });

  it('holds every answer to the latency limit, naming the slowest', () => {
    expect(runChecks({ maxLatencyMs: 1500 }, conversation)[0]!.passed).toBe(true);
    expect(runChecks({ maxLatencyMs: 1000 }, conversation)[0]).toMatchObject({ passed: false, actual: 1300 });
  });

  it('checks the analysis: success and a partial match of its data; none at all fails', () => {
    const checks = runChecks({ analysis: { success: true, data: { intent: 'HOURS', score: 5 } } }, conversation);
    expect(checks.map((c) => [c.name, c.passed, c.actual])).toEqual([
      ['analysis.success', true, true],
      ['analysis.data.intent', true, 'hours'],
      ['analysis.data.score', false, 4],
    ]);
    const none = runChecks({ analysis: { success: true } }, { ...conversation, analysis: null });
    expect(none[0]).toMatchObject({ passed: false, actual: 'no analysis' });
  });
});
