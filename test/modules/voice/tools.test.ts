import { describe, expect, it, vi } from 'vitest';
import { ToolRegistry, type ToolContext } from '../../../src/modules/voice/tools.js';

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    searchKnowledge: vi.fn(async (q: string) =>
      Array.from({ length: 7 }, (_, i) => ({ text: `match ${i} for ${q}`, score: 1 - i / 10 })),
    ),
    checkAvailability: vi.fn(async () => ['2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z']),
    bookMeeting: vi.fn(async (input) => ({ booked: true, start: input.start })),
    transferToHuman: vi.fn(async () => ({ ok: true, name: 'Sam' })),
    endCall: vi.fn(),
    ...overrides,
  };
}

const signal = new AbortController().signal;

describe('ToolRegistry', () => {
  it('tells the model each tool with its JSON Schema', () => {
    const specs = new ToolRegistry(context()).specs();
    expect(specs.map((s) => s.name)).toEqual([
      'search_knowledge',
      'check_availability',
      'book_meeting',
      'transfer_to_human',
      'opt_out',
      'end_call',
    ]);
    expect(specs[0]!.parameters).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string' } },
      additionalProperties: false,
    });
    expect(specs[2]!.parameters).toMatchObject({ required: ['start'] });
  });

  it('runs each tool through its service with checked arguments', async () => {
    const ctx = context();
    const tools = new ToolRegistry(ctx);
    const search = await tools.call('search_knowledge', '{"query":"opening hours"}', signal);
    expect((search.result as { matches: unknown[] }).matches).toHaveLength(5);
    expect(ctx.searchKnowledge).toHaveBeenCalledWith('opening hours', signal);
    expect((await tools.call('check_availability', '{"date":"2026-12-01"}', signal)).result).toEqual({
      slots: ['2026-12-01T10:00:00Z', '2026-12-01T11:00:00Z'],
    });
    expect((await tools.call('book_meeting', '{"start":"2026-12-01T10:00:00Z","name":"Ann"}', signal)).result).toEqual({
      booked: true,
      start: '2026-12-01T10:00:00Z',
    });
    expect((await tools.call('transfer_to_human', '{}', signal)).result).toEqual({ ok: true, name: 'Sam' });
    expect((await tools.call('end_call', '', signal)).result).toEqual({ ok: true });
    expect(ctx.endCall).toHaveBeenCalledOnce();
  });

  it('opt_out lists the number through its service and ends the call; a call without the service is not offered it', async () => {
    const optOut = vi.fn(async () => {});
    const ctx = context({ optOut });
    expect((await new ToolRegistry(ctx).call('opt_out', '{}', signal)).result).toEqual({ ok: true, listed: true });
    expect(optOut).toHaveBeenCalledOnce();
    expect(ctx.endCall).toHaveBeenCalledOnce();
    const { offeredTools } = await import('../../../src/modules/voice/tools.js');
    expect(offeredTools({}).map((t) => t.name)).toEqual(['end_call']);
    expect(offeredTools({ optOut }).map((t) => t.name)).toEqual(['opt_out', 'end_call']);
  });

  it('answers the model with an error for bad JSON, bad arguments, unknown tools and failing services', async () => {
    const tools = new ToolRegistry(
      context({ checkAvailability: async () => Promise.reject(new Error('calendly down')) }),
    );
    expect((await tools.call('search_knowledge', '{query', signal)).result).toEqual({
      error: 'arguments are not JSON',
    });
    expect((await tools.call('search_knowledge', '{"query":5}', signal)).result).toMatchObject({
      error: expect.stringContaining('invalid arguments: /query'),
    });
    expect((await tools.call('check_availability', '{"date":"tuesday"}', signal)).result).toMatchObject({
      error: expect.stringContaining('invalid arguments'),
    });
    expect((await tools.call('book_meeting', '{"start":"not a time"}', signal)).result).toMatchObject({
      error: expect.any(String),
    });
    expect((await tools.call('end_call', '{"extra":1}', signal)).result).toMatchObject({
      error: expect.stringContaining('invalid arguments'),
    });
    expect((await tools.call('launch_rockets', '{}', signal)).result).toEqual({ error: 'unknown tool launch_rockets' });
    expect((await tools.call('check_availability', '{}', signal)).result).toEqual({ error: 'calendly down' });
  });

  it('an abort is not a tool error: it throws', async () => {
    const controller = new AbortController();
    const tools = new ToolRegistry(
      context({
        searchKnowledge: (_q, s) =>
          new Promise((_, reject) => s.addEventListener('abort', () => reject(new Error('aborted')))),
      }),
    );
    const pending = tools.call('search_knowledge', '{"query":"x"}', controller.signal);
    controller.abort(new Error('barge-in'));
    await expect(pending).rejects.toThrow('barge-in');
  });
});
