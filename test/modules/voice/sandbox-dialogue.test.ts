import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { classify, requestedDate, SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import type { ChatMessage, ModelDelta, ToolSpec } from '../../../src/providers/language-model/interface.js';
import { ToolRegistry, VOICE_TOOLS, type ToolContext, type VoiceTool } from '../../../src/modules/voice/tools.js';
import { agentCall } from '../../../src/modules/calls/agent-calls.js';
import { BUILT_IN_PERSONAS } from '../../../src/modules/personas/catalog.js';

async function answer(model: SandboxDialogue, messages: ChatMessage[], tools: ToolSpec[]) {
  const deltas: ModelDelta[] = [];
  for await (const d of model.complete({ messages, tools, signal: new AbortController().signal })) deltas.push(d);
  const text = deltas.flatMap((d) => (d.type === 'text' ? [d.text] : [])).join('');
  const calls = deltas.flatMap((d) => (d.type === 'tool_call' ? [d.call] : []));
  return { text, calls };
}

/** Open slots of a sandbox calendar: 10:00 and 11:00 UTC on each weekday of the week from Monday 30 November 2026, narrowed to `date` when given. */
const SLOTS = ['2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04'].flatMap((d) => [
  `${d}T10:00:00Z`,
  `${d}T11:00:00Z`,
]);

interface Conversation {
  clock?: ManualClock;
  slots?: string[];
  /** The call's messages before the caller's line (default: a system prompt naming nobody). */
  before?: ChatMessage[];
  /** The tools the call offers (default: all of them). */
  tools?: VoiceTool[];
  knowledge?: ToolContext['searchKnowledge'];
}

/** Runs the engine like a reply does: tool calls through the registry, results fed back, until text without calls. */
async function converse(
  utterance: string,
  clock?: ManualClock,
  slots = SLOTS,
  options: Conversation = {},
  model = new SandboxDialogue({ agentName: 'Ada', ...(clock ? { clock } : {}) }),
) {
  const executed: Array<{ name: string; args: unknown; result: unknown }> = [];
  const tools = new ToolRegistry(
    {
      searchKnowledge:
        options.knowledge ??
        (async () => [
          { text: 'Welcome to the shop. Our opening hours are nine to five on weekdays. Parking is free.' },
          { text: 'Other.' },
        ]),
      checkAvailability: async (date) => slots.filter((s) => !date || s.startsWith(date)),
      bookMeeting: async (i) => ({ booked: true, start: i.start }),
      transferToHuman: async () => ({ ok: true, name: 'Sam' }),
      optOut: async () => {},
      endCall: () => {},
    },
    options.tools ?? VOICE_TOOLS,
  );
  const messages: ChatMessage[] = [
    ...(options.before ?? [{ role: 'system', content: 'S' }]),
    { role: 'user', content: utterance },
  ];
  const said: string[] = [];
  for (let round = 0; round < 5; round++) {
    const { text, calls } = await answer(model, messages, tools.specs());
    if (text) said.push(text);
    if (!calls.length) break;
    messages.push({ role: 'assistant', content: text || null, tool_calls: calls });
    for (const call of calls) {
      const { arguments: args, result } = await tools.call(
        call.function.name,
        call.function.arguments,
        new AbortController().signal,
      );
      executed.push({ name: call.function.name, args, result });
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  return { said, executed };
}

describe('sandbox dialogue engine', () => {
  it('is labelled sandbox', () => {
    const model = new SandboxDialogue();
    expect(model.sandbox).toBe(true);
    expect(model.name).toBe('sandbox');
  });

  it.each([
    ['Hello, who is this?', 'greeting'],
    ['Can you tell me your opening hours please?', 'question'],
    ['I would like to book a meeting for next Tuesday.', 'meeting'],
    ['Can I speak to a real person?', 'transfer'],
    ['No thank you, goodbye.', 'goodbye'],
    ['(speech not recognised)', 'unclear'],
    ['(unclear)', 'unclear'],
    ['Who am I speaking to?', 'greeting'],
    ['banana', 'unknown'],
    // A goodbye inside a longer line: what follows it decides (keyword spotting heard "book a" as "bye bye").
    ['bye bye meeting', 'meeting'],
    ['bye, can I speak to a person', 'transfer'],
    ['Book the meeting please. Thanks, bye!', 'goodbye'],
    ['That is all, goodbye', 'goodbye'],
    // The opt-out callee (DESIGN.md "Campaigns") and its kin: before a goodbye.
    ['Please stop calling me.', 'opt_out'],
    ["Don't call me again, goodbye.", 'opt_out'],
    ['Take my number off your list', 'opt_out'],
  ])('%s → %s', (utterance, intent) => {
    expect(classify(utterance)).toBe(intent);
  });

  it('calls opt_out when the caller asks not to be called again, after one line', async () => {
    const { said, executed } = await converse('Please stop calling me.');
    expect(said).toEqual(["I understand. We won't call you again. Goodbye."]);
    expect(executed.map((e) => e.name)).toEqual(['opt_out']);
  });

  it('greets', async () => {
    expect(await converse('Hello, who is this?')).toEqual({
      said: ['Hello! This is Ada. How can I help you today?'],
      executed: [],
    });
  });

  it('answers a question from the top knowledge match, quoting its most relevant sentence', async () => {
    const { said, executed } = await converse('Can you tell me your opening hours please?');
    expect(executed.map((e) => e.name)).toEqual(['search_knowledge']);
    expect(executed[0]!.args).toEqual({ query: 'Can you tell me your opening hours please' });
    expect(said).toEqual(['Our opening hours are nine to five on weekdays.']);
  });

  it('offers and books the first slot when asked for a meeting on no day in particular', async () => {
    const { said, executed } = await converse('Can I book an appointment?');
    expect(executed.map((e) => [e.name, e.args])).toEqual([
      ['check_availability', {}],
      ['book_meeting', { start: '2026-11-30T10:00:00Z' }],
    ]);
    expect(said).toEqual([
      'Let me check the calendar.',
      "The first open slot is Monday 30 November at 10:00 UTC. I'll book it for you.",
      "You're booked for Monday 30 November at 10:00 UTC. Is there anything else I can help with?",
    ]);
  });

  it('checks and books the day asked for: "next Tuesday" from the call\'s clock', async () => {
    // Friday 27 November 2026, 15:00 UTC: next Tuesday is 1 December (the calendar's first free slot is on Monday 30).
    const clock = new ManualClock(Date.parse('2026-11-27T15:00:00Z'));
    const { said, executed } = await converse('I would like to book a meeting for next Tuesday.', clock);
    expect(executed.map((e) => [e.name, e.args])).toEqual([
      ['check_availability', { date: '2026-12-01' }],
      ['book_meeting', { start: '2026-12-01T10:00:00Z' }],
    ]);
    expect(said).toEqual([
      'Let me check the calendar for Tuesday 1 December.',
      "The first open slot on Tuesday 1 December is at 10:00 UTC. I'll book it for you.",
      "You're booked for Tuesday 1 December at 10:00 UTC. Is there anything else I can help with?",
    ]);
    // A week later the same words mean the Tuesday after.
    clock.advance(7 * 86_400_000);
    const later = await converse('I would like to book a meeting for next Tuesday.', clock, [
      ...SLOTS,
      '2026-12-08T09:30:00Z',
    ]);
    expect(later.executed.map((e) => [e.name, e.args])).toEqual([
      ['check_availability', { date: '2026-12-08' }],
      ['book_meeting', { start: '2026-12-08T09:30:00Z' }],
    ]);
  });

  it('says so when the day asked for has no open slot, and books nothing', async () => {
    const clock = new ManualClock(Date.parse('2026-11-27T15:00:00Z'));
    const { said, executed } = await converse('Can I book a meeting on Saturday?', clock);
    expect(executed.map((e) => [e.name, e.args])).toEqual([['check_availability', { date: '2026-11-28' }]]);
    expect(said).toEqual([
      'Let me check the calendar for Saturday 28 November.',
      "I'm sorry, there are no open slots on Saturday 28 November.",
    ]);
  });

  it.each([
    ['next Tuesday', '2026-12-01'],
    ['on tuesday', '2026-12-01'],
    ['this Friday', '2026-12-04'], // today is Friday: the next one
    ['Monday', '2026-11-30'],
    ['tomorrow', '2026-11-28'],
    ['today', '2026-11-27'],
    ['on 2027-01-05', '2027-01-05'],
    ['some time soon', null],
  ])('"%s" on Friday 27 November 2026 (23:59 UTC) is %s', (words, date) => {
    expect(requestedDate(`a meeting ${words}`, Date.parse('2026-11-27T23:59:00Z'))).toBe(date);
  });

  it('transfers when asked for a person, and says goodbye then ends the call', async () => {
    const transfer = await converse('Can I talk to a human please');
    expect(transfer.executed.map((e) => e.name)).toEqual(['transfer_to_human']);
    expect(transfer.said).toEqual(['Of course, let me put you through to a colleague.']);
    const bye = await converse('No thank you, goodbye.');
    expect(bye.executed.map((e) => e.name)).toEqual(['end_call']);
    expect(bye.said).toEqual(['Thank you for calling. Goodbye!']);
  });

  it('asks to rephrase what it does not understand', async () => {
    expect((await converse('banana')).said).toEqual(["Sorry, I didn't understand that. Could you say it another way?"]);
  });

  describe('speaks as the agent of the call', () => {
    /** A web call's messages as the session builds them: agentCall's system prompt (the persona says "You are Amy, …"), then the first message spoken. */
    const webCall = (agent: { name: string; firstMessage?: string }): ChatMessage[] => {
      const call = agentCall(agent, {
        persona: {
          instructions: BUILT_IN_PERSONAS.find((p) => p.name === 'Amy')!.instructions,
          settings: { type: 'local', voiceId: 'en-us' },
        },
        tools: [],
        situation: 'talking with someone who calls you from a web browser to try you out',
        to: 'web',
        from: null,
        contactName: 'you',
        integrationIds: [],
        humans: [],
      });
      return [
        { role: 'system', content: call.systemPrompt },
        { role: 'assistant', content: call.firstMessage! },
      ];
    };

    it('"who is this" answers with the introduction of its first message', async () => {
      const before = webCall({ name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic. How can I help?' });
      const { said } = await converse('Hello, who is this?', undefined, SLOTS, { before }, new SandboxDialogue());
      expect(said).toEqual(['Hello! This is Amy from the clinic. How can I help you today?']);
      expect(
        (await converse('Who am I speaking to?', undefined, SLOTS, { before }, new SandboxDialogue())).said,
      ).toEqual(['Hello! This is Amy from the clinic. How can I help you today?']);
    });

    it("names the agent of the call's system prompt, not its persona nor the engine's option", async () => {
      const { said } = await converse('Hi, who is this?', undefined, SLOTS, { before: webCall({ name: 'Ben' }) });
      expect(said).toEqual(['Hello! This is Ben. How can I help you today?']);
      // An outbound call's prompt (session-service.ts systemPrompt), its first message naming nobody.
      const outbound: ChatMessage[] = [
        {
          role: 'system',
          content:
            'You are a helpful voice agent.\n\nYou are Grace Hopper, calling Ada.\n\nRemind Ada of her appointment.',
        },
        { role: 'assistant', content: 'Hello Ada, I am calling about your appointment.' },
      ];
      expect((await converse('Who is this?', undefined, SLOTS, { before: outbound })).said).toEqual([
        'Hello! This is Grace Hopper. How can I help you today?',
      ]);
    });

    it("falls back to the engine's agentName when the prompt names nobody", async () => {
      expect(
        (
          await converse('Hello, who is this?', undefined, SLOTS, {
            before: [{ role: 'system', content: 'Be brief.' }],
          })
        ).said,
      ).toEqual(['Hello! This is Ada. How can I help you today?']);
    });
  });

  it('without a calendar (no check_availability or book_meeting offered) says it cannot book, and calls no calendar tool', async () => {
    const clock = new ManualClock(Date.parse('2026-11-27T15:00:00Z'));
    const tools = VOICE_TOOLS.filter((t) => t.name !== 'check_availability' && t.name !== 'book_meeting');
    const { said, executed } = await converse('I would like to book a meeting for next Tuesday.', clock, SLOTS, {
      tools,
    });
    expect(said).toEqual(["I'm sorry, I can't book meetings on this call, but I'm happy to help with anything else."]);
    expect(executed).toEqual([]);
  });

  it.each([
    '(unclear)',
    '(speech not recognised)',
    '(unclear) goodbye',
    'bye (unclear)',
    '(unclear) can I talk to a person',
    '(unclear) book a meeting',
  ])('a caller line marked as not understood, "%s", is not acted on: it asks to hear it again', async (utterance) => {
    const { said, executed } = await converse(utterance);
    expect(said).toEqual(["Sorry, I didn't catch that. Could you say that again?"]);
    expect(executed).toEqual([]);
  });
});
