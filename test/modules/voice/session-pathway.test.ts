// A call that walks a pathway, whole, on a ManualClock: the sandbox engine's
// deterministic walk (say nodes, extraction, if edges, global edges, the
// webhook's answer, digits, SMS, transfer, end, the move limit) and a real
// model's choose_path / set_variables with the step in its system prompt.
import { describe, expect, it, vi } from 'vitest';
import { mulawToPcm } from '../../../src/lib/audio.js';
import { DtmfDetector } from '../../../src/lib/dtmf.js';
import type { ManualClock } from '../../../src/lib/clock.js';
import { SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import { PATHWAY_FAILED_LINE } from '../../../src/modules/voice/call-agent.js';
import type { Move, NodeEffect, WebhookResult } from '../../../src/modules/pathways/walker.js';
import { PathwayWalker } from '../../../src/modules/pathways/walker.js';
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';
import { clinicPathway, menuPathway } from '../pathways/fixtures.js';
import { startHarnessCall } from './call-harness.js';
import { ScriptedRealModel, settle, toolCall } from './fakes.js';

type WebhookEffect = Extract<NodeEffect, { kind: 'webhook' }>;

function pathwayOf(
  document: PathwayDocument,
  answer: (effect: WebhookEffect) => WebhookResult = () => ({
    ok: true,
    result: { count: 1, slots: [{ start: '10:00' }] },
  }),
  options: { maxMoves?: number; webhookDelayMs?: number } = {},
) {
  const moves: Move[] = [];
  const webhooks: WebhookEffect[] = [];
  const sms: string[] = [];
  const digits: string[] = [];
  const warnings: string[] = [];
  const build = (clock: ManualClock) => ({
    walker: new PathwayWalker({
      document,
      clock,
      contact: { name: 'Grace', phone: '+14155550123', fields: { note: 'allergic' } },
      ...(options.maxMoves !== undefined ? { maxMoves: options.maxMoves } : {}),
    }),
    effects: {
      webhook: async (effect: WebhookEffect, _variables: unknown, signal: AbortSignal) => {
        webhooks.push(effect);
        if (options.webhookDelayMs)
          await new Promise<void>((resolve, reject) => {
            const timer = clock.setTimeout(resolve, options.webhookDelayMs!);
            signal.addEventListener('abort', () => {
              timer.cancel();
              reject(signal.reason);
            });
          });
        return answer(effect);
      },
      digits: async (send: string) => {
        digits.push(send);
      },
      sms: async (t: string) => {
        sms.push(t);
      },
      move: (m: Move) => moves.push(m),
      warn: (w: string) => warnings.push(w),
    },
  });
  return { build, moves, webhooks, sms, digits, warnings };
}

const services = () => ({
  transferToHuman: vi.fn(async (id: string | undefined) => ({ ok: true, name: id ?? 'Sam' })),
});

describe('a call walking a pathway with the sandbox engine', () => {
  it('speaks each say node, fills variables from the words, runs the webhook and the SMS, ends at the end node', async () => {
    const p = pathwayOf(clinicPathway());
    const call = await startHarnessCall({
      model: new SandboxDialogue(),
      pathway: p.build,
      firstMessage: 'Hi, this is Ada.',
      services: services(),
    });
    await call.run(6000);
    // The start node's say is the greeting, in place of the first message.
    expect(call.spoken()).toContain('Hello Grace, this is Bright Dental. Are you an existing patient?');
    expect(call.spoken()).not.toContain('Hi, this is Ada.');
    await call.say('Yes I am');
    await call.run(5000);
    expect(call.spoken()).toContain('What can we help with: a checkup, a cleaning, or pain?');
    await call.say('A checkup tomorrow please');
    await call.run(6000);
    expect(p.webhooks).toHaveLength(1);
    expect(JSON.parse(p.webhooks[0]!.body!)).toEqual({
      reason: 'checkup',
      date: '2026-12-02',
      patient: true,
      note: 'allergic',
    });
    expect(call.spoken()).toContain('I can book you for 10:00.');
    await call.say('four one five five five five zero one two three and ada at example dot com');
    const outcome = await settle(call.clock, call.outcome);
    expect(p.sms).toEqual(['Bright Dental: you are booked for 10:00.']);
    expect(call.spoken()).toContain('You are all set, Grace. Goodbye!');
    expect(outcome.outcome).toBe('completed');
    expect(outcome.reason).toBe('agent_ended');
    expect(call.control.hangUp).toHaveBeenCalled();
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['greet', 'qualify', 'lookup', 'book', 'confirm', 'done']);
    expect(outcome.pathway?.variables).toMatchObject({
      is_patient: true,
      reason: 'checkup',
      preferred_date: '2026-12-02',
      slot_count: 1,
      first_slot: '10:00',
      phone: '+14155550123',
      email: 'ada@example.com',
    });
    // Each move is an event; the start has no `from`.
    expect(p.moves.map((m) => [m.from, m.node])).toEqual([
      [undefined, 'greet'],
      ['greet', 'qualify'],
      ['qualify', 'lookup'],
      ['lookup', 'book'],
      ['book', 'confirm'],
      ['confirm', 'done'],
    ]);
    // Transcript lines carry their node.
    const byText = (t: string) => outcome.transcript.find((l) => l.text.includes(t));
    expect(byText('existing patient')?.node).toBe('greet');
    expect(byText('Yes I am')?.node).toBe('greet');
    expect(byText('all set')?.node).toBe('done');
  });

  it('takes a global edge from any conversation node (a transfer node), and an if edge the server decides', async () => {
    const person = pathwayOf(clinicPathway());
    const svc = services();
    const call = await startHarnessCall({ model: new SandboxDialogue(), pathway: person.build, services: svc });
    await call.run(6000);
    await call.say('Can I talk to a real person');
    const outcome = await settle(call.clock, call.outcome);
    expect(call.spoken()).toContain('One moment, I will find a receptionist.');
    expect(svc.transferToHuman).toHaveBeenCalledWith(undefined, expect.anything());
    expect(call.control.transfer).toHaveBeenCalled();
    expect(outcome.outcome).toBe('transferred');
    expect(outcome.pathway?.path.map((e) => [e.node, e.edge])).toEqual([
      ['greet', undefined],
      ['person', '/global/0'],
    ]);

    const pain = pathwayOf(clinicPathway());
    const svc2 = services();
    const second = await startHarnessCall({ model: new SandboxDialogue(), pathway: pain.build, services: svc2 });
    await second.run(6000);
    await second.say('No');
    await second.run(5000);
    await second.say('I am in pain');
    const ended = await settle(second.clock, second.outcome);
    expect(svc2.transferToHuman).toHaveBeenCalledWith('ha_urgent', expect.anything());
    expect(ended.pathway?.path.map((e) => e.node)).toEqual(['greet', 'qualify', 'urgent']);
    expect(ended.pathway?.path.at(-1)?.edge).toBe('/edges/1');
  });

  it('ends failed with outcome pathway_error past the move limit, after one line', async () => {
    const p = pathwayOf(clinicPathway(), undefined, { maxMoves: 2 });
    const call = await startHarnessCall({ model: new SandboxDialogue(), pathway: p.build, services: services() });
    await call.run(6000);
    await call.say('Yes');
    await call.run(5000);
    await call.say('A cleaning on Friday');
    const outcome = await settle(call.clock, call.outcome);
    expect(outcome.outcome).toBe('pathway_error');
    expect(outcome.error).toEqual({ provider: 'pathway', message: expect.stringContaining('2 edges') });
    expect(call.spoken()).toContain(PATHWAY_FAILED_LINE);
    expect(call.control.hangUp).toHaveBeenCalled();
    // The webhook's answer asked for the third move: not taken.
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['greet', 'qualify', 'lookup']);
  });

  it('a caller speaking while a webhook runs does not take it back: its answer moves the walk on', async () => {
    const p = pathwayOf(clinicPathway(), undefined, { webhookDelayMs: 3000 });
    const call = await startHarnessCall({ model: new SandboxDialogue(), pathway: p.build, services: services() });
    await call.run(6000);
    await call.say('Yes');
    await call.run(5000);
    await call.say('A checkup tomorrow');
    // The lookup is running: the caller talks over the wait.
    expect(p.webhooks).toHaveLength(1);
    await call.say('Hello, are you there?', 1200);
    await call.run(8000);
    expect(call.isEnded()).toBe(false);
    expect(call.spoken()).toContain('I can book you for 10:00.');
    call.session.end();
    const outcome = await settle(call.clock, call.outcome);
    expect(outcome.outcome).toBe('completed');
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['greet', 'qualify', 'lookup', 'book']);
  });

  it('a failed webhook assigns nothing and leads on by its fallback; the warning is kept', async () => {
    const p = pathwayOf(clinicPathway(), () => ({ ok: false, error: 'HTTP 500 (after a retry)' }));
    const call = await startHarnessCall({ model: new SandboxDialogue(), pathway: p.build, services: services() });
    await call.run(6000);
    await call.say('Yes');
    await call.run(5000);
    await call.say('A cleaning on 2026-12-04');
    const outcome = await settle(call.clock, call.outcome);
    expect(call.spoken()).toContain('Sorry, nothing is open on 2026-12-04. Goodbye.');
    expect(outcome.pathway?.path.at(-1)?.node).toBe('no_slots');
    expect(outcome.warnings).toContain('webhook node "lookup": HTTP 500 (after a retry)');
  });

  it('sends digits and the SMS at the start, then branches on a key the caller presses', async () => {
    const p = pathwayOf(menuPathway());
    const call = await startHarnessCall({ model: new SandboxDialogue(), pathway: p.build });
    await call.run(6000);
    expect(p.digits).toEqual(['1w2#']);
    // The keys went out as tones in the call's audio, before the question.
    const detector = new DtmfDetector();
    for (const m of call.socket.sent.filter((x) => x.event === 'media'))
      detector.push(mulawToPcm(Buffer.from(m.media.payload, 'base64')));
    expect(detector.heard.join('')).toBe('12#');
    expect(p.sms[0]).toMatch(/^We are calling the pharmacy for Grace at 2026-12-01T09:00:0\dZ\.$/);
    expect(call.spoken()).toContain('Is the refill for Grace ready?');
    await call.press('1');
    const outcome = await settle(call.clock, call.outcome);
    expect(call.spoken()).toContain('Thank you!');
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['press', 'notify', 'ask', 'thanks']);
    expect(outcome.transcript.find((l) => l.keypad)).toMatchObject({ role: 'caller', text: '1', node: 'ask' });
  });
});

describe('a call walking a pathway with a real model', () => {
  it('tells the model the current step, moves by set_variables and choose_path, speaks the step it arrives at', async () => {
    const p = pathwayOf(clinicPathway());
    const model = new ScriptedRealModel([
      [toolCall('c1', 'set_variables', { is_patient: 'true' })],
      [],
      [toolCall('c2', 'choose_path', { to: 'person' })],
    ]);
    const svc = services();
    const call = await startHarnessCall({ model, pathway: p.build, services: svc, systemPrompt: 'You are Ada.' });
    await call.run(6000);
    await call.say('yes I have been before');
    await call.run(6000);
    const first = model.requests[0]!;
    expect(first.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are Ada.') });
    expect(first.messages[0]!.content).toContain('The current step is "greet"');
    expect(first.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['choose_path', 'set_variables', 'end_call']),
    );
    // After set_variables the walk moved: the next round's prompt is the new step's, and its say was said.
    expect(model.requests[1]!.messages[0]!.content).toContain('The current step is "qualify"');
    expect(call.spoken()).toContain('What can we help with: a checkup, a cleaning, or pain?');
    await call.say('I have a question about my invoice');
    const outcome = await settle(call.clock, call.outcome);
    expect(call.spoken()).toContain('One moment, I will find a receptionist.');
    expect(outcome.outcome).toBe('transferred');
    // The move ended the pathway (a transfer): the model was not asked again after choose_path.
    expect(model.requests).toHaveLength(3);
    expect(outcome.toolCalls.map((t) => t.name)).toEqual(['set_variables', 'choose_path']);
    expect(outcome.toolCalls[1]!.result).toMatchObject({ ok: true, node: 'person' });
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['greet', 'qualify', 'person']);
  });

  it('takes a keypad edge by its keywords before asking the model', async () => {
    const p = pathwayOf(menuPathway());
    const model = new ScriptedRealModel([]);
    const call = await startHarnessCall({ model, pathway: p.build });
    await call.run(6000);
    await call.press('1');
    const outcome = await settle(call.clock, call.outcome);
    expect(model.requests).toHaveLength(0);
    expect(outcome.pathway?.path.at(-1)?.node).toBe('thanks');
  });
});
