// The tool services a call is given (voice-agent/runner.ts callToolServices): only
// those it can use, so its model is offered only their tools, each passing
// on the signal a barge-in aborts (before this the binding dropped it, and
// every call was offered the calendar).
import { describe, expect, it, vi } from 'vitest';
import { callToolServices, type VoiceToolServices } from '../../../src/modules/voice-agent/runner.js';
import { offeredTools } from '../../../src/modules/voice/tools.js';

function fakeTools() {
  return {
    searchKnowledge: vi.fn(async () => [{ text: 'Nine to five.' }]),
    checkAvailability: vi.fn(async () => ['2026-12-01T10:00:00Z']),
    bookMeeting: vi.fn(async (_u: string, _i: string[], input: { start: string }) => ({
      booked: true,
      start: input.start,
    })),
  } satisfies VoiceToolServices;
}
const transfer = async () => ({ ok: true, name: 'Sam' });
const names = (services: ReturnType<typeof callToolServices>) => offeredTools(services).map((t) => t.name);

describe('the tool services of a call', () => {
  it('are those its context holds: a knowledge base, integrations, human agents; end_call always', () => {
    const tools = fakeTools();
    expect(names(callToolServices('u1', {}, tools, transfer))).toEqual(['end_call']);
    expect(names(callToolServices('u1', { knowledgeBaseId: 'kb1' }, tools, transfer))).toEqual([
      'search_knowledge',
      'end_call',
    ]);
    expect(names(callToolServices('u1', { integrationIds: ['cal1'] }, tools, transfer))).toEqual([
      'check_availability',
      'book_meeting',
      'end_call',
    ]);
    expect(names(callToolServices('u1', { integrationIds: [], humanAgents: [] }, tools, transfer))).toEqual([
      'end_call',
    ]);
    expect(
      names(
        callToolServices(
          'u1',
          {
            knowledgeBaseId: 'kb1',
            integrationIds: ['cal1'],
            humanAgents: [{ id: 'h1', name: 'Sam', phone: '+14155550111' }],
          },
          tools,
          transfer,
        ),
      ),
    ).toEqual(['search_knowledge', 'check_availability', 'book_meeting', 'transfer_to_human', 'end_call']);
  });

  it("pass on the reply's signal, as the call's owner", async () => {
    const tools = fakeTools();
    const services = callToolServices('u1', { knowledgeBaseId: 'kb1', integrationIds: ['cal1'] }, tools, transfer);
    const signal = new AbortController().signal;
    await services.searchKnowledge!('hours', signal);
    await services.checkAvailability!('2026-12-01', signal);
    await services.bookMeeting!({ start: '2026-12-01T10:00:00Z' }, signal);
    expect(tools.searchKnowledge).toHaveBeenCalledWith('u1', 'kb1', 'hours', signal);
    expect(tools.checkAvailability).toHaveBeenCalledWith('u1', ['cal1'], '2026-12-01', signal);
    expect(tools.bookMeeting).toHaveBeenCalledWith('u1', ['cal1'], { start: '2026-12-01T10:00:00Z' }, signal);
  });
});
