import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { ProviderFailure } from '../../../src/providers/failure.js';
import { heardText } from '../../../src/modules/voice/heard-text.js';
import { DEFAULT_APOLOGY, runReply, type ReplyDeps } from '../../../src/modules/voice/reply.js';
import { AudioSink } from '../../../src/modules/voice/sink.js';
import { ToolRegistry } from '../../../src/modules/voice/tools.js';
import { TwilioTransport } from '../../../src/modules/voice/transport.js';
import { FakeSocket, ScriptedModel, settle, text, ToneSpeech, toolCall, type ModelStep } from './fakes.js';

const voice = { provider: 'elevenlabs', voiceId: 'v1' };

async function setup(
  steps: ModelStep[],
  options: { firstTokenMs?: number; ttsFirstByteMs?: number; echo?: boolean } = {},
) {
  const clock = new ManualClock(1_000_000);
  const socket = new FakeSocket();
  if (options.echo !== false) socket.autoEcho = clock;
  const transport = new TwilioTransport(socket);
  socket.start();
  await transport.started;
  const sink = new AudioSink(transport, clock);
  const model = new ScriptedModel(steps, clock, options.firstTokenMs ?? 0);
  const primary = new ToneSpeech('elevenlabs', clock, options.ttsFirstByteMs ?? 0);
  const local = new ToneSpeech('espeak-ng', clock);
  const searched: string[] = [];
  const tools = new ToolRegistry({
    searchKnowledge: async (q) => {
      searched.push(q);
      return [{ text: 'We open at nine. We close at five.' }];
    },
    checkAvailability: async () => [],
    bookMeeting: async (i) => ({ booked: true, start: i.start }),
    transferToHuman: async () => ({ ok: true }),
    endCall: () => {},
  });
  const deps: ReplyDeps = {
    model,
    tools,
    voices: [
      { speech: primary, voice },
      { speech: local, voice: { provider: 'local', voiceId: 'en' } },
    ],
    sink,
    clock,
    callStartMs: 1_000_000 - 5000,
  };
  return { clock, socket, sink, model, primary, local, deps, searched };
}

describe('one reply', () => {
  it('speaks sentence by sentence, runs a tool call and feeds it back until the model answers in text', async () => {
    const { clock, socket, model, deps, searched, primary } = await setup([
      [text('Let me check. '), toolCall('c1', 'search_knowledge', { query: 'opening hours' })],
      [text('We open at nine. '), text('We close at five.')],
    ]);
    const facts = await settle(
      clock,
      runReply(deps, {
        signal: new AbortController().signal,
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'When are you open?' },
        ],
        turnEndMs: clock.now() - 300,
        sttMs: 200,
      }),
    );
    expect(primary.spoken).toEqual(['Let me check.', 'We open at nine.', 'We close at five.']);
    expect(facts.segments.map((s) => [s.text, s.round, s.playedMs === s.audioMs])).toEqual([
      ['Let me check.', 0, true],
      ['We open at nine.', 1, true],
      ['We close at five.', 1, true],
    ]);
    expect(searched).toEqual(['opening hours']);
    expect(facts.toolCalls).toEqual([
      {
        name: 'search_knowledge',
        arguments: { query: 'opening hours' },
        result: { matches: [{ text: 'We open at nine. We close at five.' }] },
        atMs: 5000,
      },
    ]);
    expect(model.requests[1]!.messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me check. ',
        tool_calls: [
          {
            id: 'c1',
            type: 'function',
            function: { name: 'search_knowledge', arguments: '{"query":"opening hours"}' },
          },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'c1',
        content: JSON.stringify({ matches: [{ text: 'We open at nine. We close at five.' }] }),
      },
    ]);
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain('search_knowledge');
    expect(facts.interrupted).toBe(false);
    expect(heardText(facts.segments).text).toBe('Let me check. We open at nine. We close at five.');
    // A mark after every sentence at least.
    expect(socket.marks().length).toBeGreaterThanOrEqual(3);
  });

  it('measures latency from the end of caller speech to the first frame out, in parts', async () => {
    const { clock, deps } = await setup([[text('Hello there.')]], { firstTokenMs: 400, ttsFirstByteMs: 160 });
    const turnEnd = clock.now() - 500; // speech ended 500 ms ago; recognition took 300 of them
    const facts = await settle(
      clock,
      runReply(deps, { signal: new AbortController().signal, messages: [], turnEndMs: turnEnd, sttMs: 300 }),
    );
    expect(facts.latency).not.toBeNull();
    const l = facts.latency!;
    expect(l.sttMs).toBe(300);
    expect(l.llmFirstTokenMs).toBeGreaterThanOrEqual(400);
    expect(l.llmFirstTokenMs).toBeLessThanOrEqual(420);
    expect(l.ttsFirstByteMs).toBeGreaterThanOrEqual(160);
    expect(l.ttsFirstByteMs).toBeLessThanOrEqual(180);
    expect(l.totalMs).toBe(facts.firstFrameAtMs! - turnEnd);
    expect(l.overheadMs).toBe(l.totalMs - l.sttMs - l.llmFirstTokenMs - l.ttsFirstByteMs);
    expect(l.totalMs).toBeGreaterThanOrEqual(500 + 400 + 160);
  });

  it('retries the model once after a 5xx, without a word said twice', async () => {
    const { clock, deps, primary, model } = await setup([
      new ProviderFailure('openai', '503 Service Unavailable'),
      [text('Sorry for the wait. Here it is.')],
    ]);
    const facts = await settle(clock, runReply(deps, { signal: new AbortController().signal, messages: [] }));
    expect(model.requests).toHaveLength(2);
    expect(primary.spoken).toEqual(['Sorry for the wait.', 'Here it is.']);
    expect(facts.errors).toEqual([{ provider: 'openai', message: '503 Service Unavailable' }]);
  });

  it('retries when no first token comes within the deadline (4 s)', async () => {
    const { clock, deps, model, primary } = await setup(['hang', [text('Here.')]]);
    const facts = await settle(clock, runReply(deps, { signal: new AbortController().signal, messages: [] }));
    expect(model.requestedAt[1]! - model.requestedAt[0]!).toBeGreaterThanOrEqual(4000);
    expect(model.requestedAt[1]! - model.requestedAt[0]!).toBeLessThan(4100);
    expect(model.requests[0]!.signal.aborted).toBe(true);
    expect(primary.spoken).toEqual(['Here.']);
    expect(facts.errors[0]!.message).toContain('no answer within 4000 ms');
  });

  it('after a second failure says one apology line', async () => {
    const { clock, deps, primary, model } = await setup([
      new ProviderFailure('openai', '500'),
      new ProviderFailure('openai', '502'),
      [text('never')],
    ]);
    const facts = await settle(clock, runReply(deps, { signal: new AbortController().signal, messages: [] }));
    expect(model.requests).toHaveLength(2);
    // Said as any text is, sentence by sentence.
    expect(primary.spoken).toEqual(["I'm sorry, I'm having trouble answering right now.", 'Could you say that again?']);
    expect(primary.spoken.join(' ')).toBe(DEFAULT_APOLOGY);
    expect(facts.errors).toHaveLength(2);
  });

  it('a refused voice hands the reply to the local voice', async () => {
    const { clock, deps, primary, local } = await setup([[text('One. Two.')]]);
    primary.failWith = new ProviderFailure('elevenlabs', '401 Unauthorized', false);
    const facts = await settle(clock, runReply(deps, { signal: new AbortController().signal, messages: [] }));
    expect(local.spoken).toEqual(['One.', 'Two.']);
    expect(facts.voiceIndex).toBe(1);
    expect(facts.errors).toEqual([{ provider: 'elevenlabs', message: '401 Unauthorized' }]);
    expect(facts.fatal).toBe(false);
    expect(facts.segments.every((s) => s.playedMs === s.audioMs && s.audioMs > 0)).toBe(true);
  });

  it('with every voice failing the reply is fatal', async () => {
    const { clock, deps, primary, local } = await setup([[text('One.')]]);
    primary.failWith = new ProviderFailure('elevenlabs', '500');
    local.failWith = new ProviderFailure('espeak-ng', 'espeak-ng exited 1');
    const facts = await settle(clock, runReply(deps, { signal: new AbortController().signal, messages: [] }));
    expect(facts.fatal).toBe(true);
    expect(facts.errors.map((e) => e.provider)).toEqual(['elevenlabs', 'espeak-ng']);
  });

  it('an abort stops model and speech; what played is what the marks say', async () => {
    const { clock, deps, sink, socket } = await setup([
      [text('This is a rather long first sentence for the test. And a second one.')],
    ]);
    const controller = new AbortController();
    const pending = runReply(deps, { signal: controller.signal, messages: [] });
    for (let i = 0; i < 30; i++) {
      clock.advance(20);
      await new Promise((r) => setImmediate(r));
    }
    controller.abort(new Error('barge-in'));
    sink.clear();
    const facts = await settle(clock, pending);
    expect(facts.interrupted).toBe(true);
    const heard = heardText(facts.segments, facts.pending);
    expect(heard.interrupted).toBe(true);
    expect(heard.text.length).toBeGreaterThan(0);
    expect(heard.text.length).toBeLessThan('This is a rather long first sentence for the test.'.length);
    expect(heard.unheard.endsWith('And a second one.')).toBe(true);
    expect(socket.count('clear')).toBe(1);
  });

  it('speaks given text without the model', async () => {
    const { clock, deps, model, primary } = await setup([]);
    await settle(
      clock,
      runReply(deps, { signal: new AbortController().signal, text: 'Hello, this is Ada. How can I help?' }),
    );
    expect(model.requests).toHaveLength(0);
    expect(primary.spoken).toEqual(['Hello, this is Ada.', 'How can I help?']);
  });

  it('a voice or a tool that ignores the abort does not hold the reply', async () => {
    const stuckVoice = await setup([[text('Hello.')]]);
    stuckVoice.deps.voices = [
      {
        speech: {
          name: 'stuck',
          synthesize: () => ({ [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => {}) }) }),
        },
        voice,
      },
    ];
    const c1 = new AbortController();
    const r1 = runReply(stuckVoice.deps, { signal: c1.signal, messages: [] });
    await settle(stuckVoice.clock, new Promise((r) => stuckVoice.clock.setTimeout(() => r(null), 500)));
    c1.abort(new Error('barge-in'));
    stuckVoice.sink.clear();
    expect((await settle(stuckVoice.clock, r1, 1000)).interrupted).toBe(true);

    const stuckTool = await setup([[toolCall('c1', 'search_knowledge', { query: 'x' })]]);
    stuckTool.deps.tools = new ToolRegistry({
      searchKnowledge: () => new Promise<never>(() => {}),
      checkAvailability: async () => [],
      bookMeeting: async (i) => ({ booked: true, start: i.start }),
      transferToHuman: async () => ({ ok: true }),
      endCall: () => {},
    });
    const c2 = new AbortController();
    const r2 = runReply(stuckTool.deps, { signal: c2.signal, messages: [] });
    await settle(stuckTool.clock, new Promise((r) => stuckTool.clock.setTimeout(() => r(null), 500)));
    c2.abort(new Error('barge-in'));
    expect((await settle(stuckTool.clock, r2, 1000)).interrupted).toBe(true);
  });
});
