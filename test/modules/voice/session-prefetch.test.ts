// The model asked ahead of the endpoint (model-prefetch.ts): with a real
// model, the request the reply will send goes out as soon as the caller's
// words are final; the reply takes its answer, and a turn that goes on drops it
// unsaid. On a ManualClock: the model answers 300 ms after each request.
import { describe, expect, it } from 'vitest';
import { startHarnessCall } from './call-harness.js';
import { ScriptedModel, text, toolCall } from './fakes.js';

const FIRST_TOKEN_MS = 300;
const CALL_START = Date.parse('2026-12-01T09:00:00Z');

/** A harness call whose model answers on the call's clock; `realModel: false` plays the sandbox engine. */
async function harness(
  steps: ConstructorParameters<typeof ScriptedModel>[0],
  realModel = true,
  settings?: { askModelAhead: boolean },
) {
  let model!: ScriptedModel;
  const call = await startHarnessCall({
    model: { name: 'scripted-model', sandbox: !realModel, complete: (r) => model.complete(r) },
    ...(settings ? { settings } : {}),
  });
  model = new ScriptedModel(steps, call.clock, FIRST_TOKEN_MS, !realModel);
  return { call, model };
}

/** One question and its answer: the answer's latency and when the model was asked against the turn's end. */
async function askOpeningHours(realModel: boolean) {
  const { call, model } = await harness([[text('We open at nine.')]], realModel);
  await call.say('What are your opening hours?');
  await call.run(1500);
  const caller = call.lines.find((l) => l.role === 'caller')!;
  const answer = call.lines.find((l) => l.role === 'agent' && l.latency)!;
  return {
    requests: model.requests.length,
    said: call.spoken(),
    totalMs: answer.latency!.totalMs,
    // The turn ends 500 ms after speech (a final ending a sentence).
    askedMsBeforeTurnEnd: CALL_START + caller.endMs + 500 - model.requestedAt[0]!,
  };
}

describe('the model asked ahead', () => {
  it('a real model is asked once the words are final: the reply starts a model wait sooner, from one request', async () => {
    const ahead = await askOpeningHours(true);
    const waited = await askOpeningHours(false);
    expect(ahead.requests).toBe(1);
    expect(waited.requests).toBe(1);
    // The same turn and answer: asked ahead, the model's 300 ms ran inside the endpoint's 500 ms.
    expect(ahead.said).toBe(waited.said);
    expect(waited.totalMs - ahead.totalMs).toBeGreaterThanOrEqual(FIRST_TOKEN_MS - 40);
    expect(ahead.askedMsBeforeTurnEnd).toBeGreaterThanOrEqual(FIRST_TOKEN_MS);
    expect(waited.askedMsBeforeTurnEnd).toBeLessThanOrEqual(0);
  });

  it('the caller goes on: the answer asked ahead is never said or acted on, and the reply asks for the whole line', async () => {
    const { call, model } = await harness([
      // The answer to the first half: a hang-up the caller must never get.
      [toolCall('c1', 'end_call', {}), text('Goodbye.')],
      [text('Tuesday at ten works.')],
    ]);
    await call.run(700, true);
    call.stt.say('I would like to book');
    await call.run(100, true);
    await call.run(400); // silent, less than the 1 s a final without a full stop waits
    await call.run(700, true);
    call.stt.say('a meeting on Tuesday.');
    await call.run(100, true);
    await call.run(2000);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]!.messages.at(-1)).toEqual({ role: 'user', content: 'I would like to book' });
    expect(model.requests[1]!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'I would like to book a meeting on Tuesday.',
    });
    expect(call.spoken()).toBe('Tuesday at ten works.');
    expect(call.isEnded()).toBe(false);
    expect(call.control.hangUp).not.toHaveBeenCalled();
    expect(call.lines.filter((l) => l.role === 'caller').map((l) => l.text)).toEqual([
      'I would like to book a meeting on Tuesday.',
    ]);
  });

  it("a sound with no words after the caller's line keeps the answer already asked", async () => {
    const { call, model } = await harness([[text('We open at nine.')]]);
    await call.run(700, true);
    call.stt.say('What are your opening hours?');
    await call.run(100, true);
    await call.run(300);
    await call.run(200, true); // a breath the recogniser makes nothing of
    await call.run(2000);
    expect(model.requests).toHaveLength(1);
    expect(call.spoken()).toBe('We open at nine.');
  });

  it("a tool call in the answer asked ahead runs once the turn has ended, in the turn's reply", async () => {
    const { call, model } = await harness([[toolCall('c1', 'end_call', {})], [text('Goodbye.')]]);
    await call.run(700, true);
    call.stt.say('That is all, thank you.');
    await call.run(100, true);
    // Speech has just ended: the model is asked, its answer holds a hang-up, and nothing has happened yet.
    await call.run(200);
    expect(model.requests).toHaveLength(1);
    expect(call.spoken()).toBe('');
    await call.run(3000);
    // The second request is the reply's next round, told the tool's result.
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect(call.spoken()).toBe('Goodbye.');
    expect(call.isEnded()).toBe(true);
  });

  it.each([
    ['the sandbox engine is not asked ahead (its walk acts on the words)', false, undefined],
    ['VOICE_ASK_MODEL_AHEAD=0: a real model is asked at the end of the turn', true, { askModelAhead: false }],
  ])('%s', async (_name, realModel, settings) => {
    const { call, model } = await harness([[text('We open at nine.')]], realModel, settings);
    await call.run(700, true);
    call.stt.say('What are your opening hours?');
    await call.run(100, true);
    await call.run(200);
    expect(model.requests).toHaveLength(0);
    await call.run(1500);
    expect(model.requests).toHaveLength(1);
  });
});
