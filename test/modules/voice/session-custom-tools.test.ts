// Custom HTTP tools during a call, on a ManualClock (the request itself is
// custom-tools' invoke, tested against a local server in invoke.test.ts and
// pathway-calls.test.ts): offered to the model, the `speak` line said while a
// slow one runs and never for a fast one, the apology after a failure, the
// sandbox engine calling one by its keywords, and `assign`ed variables used
// in the next line.
import { describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/lib/clock.js';
import { SandboxDialogue } from '../../../src/providers/language-model/sandbox.js';
import { TOOL_APOLOGY, type CallCustomTool, type CustomToolInvoker } from '../../../src/modules/voice/call-agent.js';
import { PathwayWalker } from '../../../src/modules/pathways/walker.js';
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';
import { startHarnessCall } from './call-harness.js';
import { ScriptedRealModel, settle, text, toolCall } from './fakes.js';

const checkOrder: CallCustomTool = {
  name: 'check_order',
  description: 'Looks an order up by its number',
  parameters: {
    type: 'object',
    properties: { order: { type: 'integer' } },
    required: ['order'],
  },
  speak: 'Let me look that up.',
  keywords: ['order'],
};

type Outcome = Awaited<ReturnType<CustomToolInvoker['invoke']>>;

/** An invoker that answers after `delayMs` of the call's clock; records each use. */
function invoker(clock: () => ManualClock, answer: Outcome, delayMs: number) {
  const uses: Array<{ tool: string; args: unknown; variables: Record<string, unknown> }> = [];
  const fake: CustomToolInvoker = {
    invoke: (tool, args, variables, signal) =>
      new Promise((resolve, reject) => {
        uses.push({ tool: tool.name, args, variables });
        const timer = clock().setTimeout(() => resolve(answer), delayMs);
        signal.addEventListener('abort', () => {
          timer.cancel();
          reject(signal.reason);
        });
      }),
  };
  return { fake, uses };
}

describe('custom tools on a call', () => {
  it('are offered to the model; a slow one has its speak line said while it runs, then the answer uses its result', async () => {
    let clock!: ManualClock;
    const tools = invoker(
      () => clock,
      { ok: true, result: { status: 'shipped' }, assigned: { order_status: 'shipped' } },
      2500,
    );
    const model = new ScriptedRealModel([
      [toolCall('c1', 'check_order', { order: 42 })],
      [text('Your order has shipped.')],
    ]);
    const call = await startHarnessCall({
      model,
      firstMessage: 'Hi, this is Ada.',
      customTools: { tools: [checkOrder], invoker: tools.fake },
      variables: { customer: 'Grace' },
    });
    clock = call.clock;
    await call.run(3000);
    await call.say('Where is my order 42');
    await call.run(8000);
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain('check_order');
    expect(tools.uses).toEqual([{ tool: 'check_order', args: { order: 42 }, variables: { customer: 'Grace' } }]);
    expect(call.speech.spoken).toEqual(['Hi, this is Ada.', 'Let me look that up.', 'Your order has shipped.']);
    // The model was given the tool's JSON answer.
    expect(model.requests[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: JSON.stringify({ status: 'shipped' }),
    });
    call.session.end();
    const outcome = await settle(call.clock, call.outcome);
    expect(outcome.toolCalls).toEqual([
      { name: 'check_order', arguments: { order: 42 }, result: { status: 'shipped' }, atMs: expect.any(Number) },
    ]);
    expect(outcome.variables).toEqual({ customer: 'Grace', order_status: 'shipped' });
  });

  it('says nothing while a fast one runs; a failure goes back to the model as { error }', async () => {
    let clock!: ManualClock;
    const tools = invoker(() => clock, { ok: false, error: 'HTTP 500 (after a retry)' }, 300);
    const model = new ScriptedRealModel([
      [toolCall('c1', 'check_order', { order: 7 })],
      [text("Sorry, I can't look orders up right now.")],
    ]);
    const call = await startHarnessCall({ model, customTools: { tools: [checkOrder], invoker: tools.fake } });
    clock = call.clock;
    await call.say('Where is order 7');
    await call.run(6000);
    expect(call.speech.spoken).toEqual(["Sorry, I can't look orders up right now."]);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: JSON.stringify({ error: 'HTTP 500 (after a retry)' }),
    });
    call.session.end();
    const outcome = await settle(call.clock, call.outcome);
    expect(outcome.toolCalls[0]).toMatchObject({ name: 'check_order', result: { error: 'HTTP 500 (after a retry)' } });
  });

  it('the sandbox engine calls one by its keywords, arguments read from the words: the line while it runs, an apology on failure', async () => {
    let clock!: ManualClock;
    const failing = invoker(() => clock, { ok: false, error: 'timed out after 5000 ms' }, 5000);
    const call = await startHarnessCall({
      model: new SandboxDialogue(),
      customTools: { tools: [checkOrder], invoker: failing.fake },
    });
    clock = call.clock;
    await call.say('What about my order number 1250');
    await call.run(12_000);
    expect(failing.uses[0]!.args).toEqual({ order: 1250 });
    expect(call.speech.spoken).toEqual(['Let me look that up.', TOOL_APOLOGY]);
    call.session.end();
    const outcome = await settle(call.clock, call.outcome);
    expect(outcome.toolCalls).toEqual([
      {
        name: 'check_order',
        arguments: { order: 1250 },
        result: { error: 'timed out after 5000 ms' },
        atMs: expect.any(Number),
      },
    ]);
  });

  it("a node's inline tool: its assigned variable takes the node's if edge, and the next line says it", async () => {
    const document: PathwayDocument = {
      name: 'Orders',
      start: 'ask',
      variables: { status: { type: 'enum', values: ['shipped', 'delayed'] } },
      nodes: [
        {
          id: 'ask',
          type: 'conversation',
          say: 'Which order is it about?',
          tools: [
            {
              ...checkOrder,
              type: 'http',
              url: 'https://orders.example.com/x',
              method: 'POST',
              headers: {},
              timeoutMs: 5000,
              assign: { status: '$.status' },
            } as never,
          ],
        },
        { id: 'tell', type: 'end', say: 'Your order has {{status}}. Goodbye!' },
      ],
      edges: [{ from: 'ask', to: 'tell', if: { var: 'status', op: 'exists' } }],
    };
    let clock!: ManualClock;
    const tools = invoker(
      () => clock,
      { ok: true, result: { status: 'SHIPPED' }, assigned: { status: 'SHIPPED' } },
      200,
    );
    const call = await startHarnessCall({
      model: new SandboxDialogue(),
      pathway: (c) => ({
        walker: new PathwayWalker({ document, clock: c }),
        effects: {
          webhook: async () => ({ ok: false, error: 'none' }),
          digits: async () => {},
          sms: async () => {},
          move: () => {},
          warn: () => {},
        },
      }),
      customTools: { tools: [], invoker: tools.fake },
    });
    clock = call.clock;
    await call.run(3000);
    await call.say('It is order 42');
    const outcome = await settle(call.clock, call.outcome);
    expect(tools.uses[0]).toMatchObject({ tool: 'check_order', args: { order: 42 } });
    // The enum value is made canonical as declared; the end node's line is filled with it.
    expect(call.speech.spoken).toEqual(['Which order is it about?', 'Your order has shipped.', 'Goodbye!']);
    expect(outcome.pathway?.variables).toEqual({ status: 'shipped' });
    expect(outcome.pathway?.path.map((e) => e.node)).toEqual(['ask', 'tell']);
  });
});
