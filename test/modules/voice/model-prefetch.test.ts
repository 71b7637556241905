import { describe, expect, it } from 'vitest';
import { ProviderFailure } from '../../../src/providers/failure.js';
import type { CompletionRequest, ModelDelta } from '../../../src/providers/language-model/interface.js';
import { ModelPrefetch } from '../../../src/modules/voice/model-prefetch.js';
import { ScriptedModel, text } from './fakes.js';

const asked = { messages: [{ role: 'user' as const, content: 'Hi.' }], tools: [] };

async function collect(stream: AsyncIterable<ModelDelta>) {
  const out: ModelDelta[] = [];
  for await (const d of stream) out.push(d);
  return out;
}

describe('ModelPrefetch', () => {
  it('hands the answer over once, for the very request asked ahead; another request goes to the model', async () => {
    const model = new ScriptedModel([[text('Hello.')], [text('Second.')], [text('Third.')]], undefined, 0, false);
    const prefetch = new ModelPrefetch(model, asked);
    const signal = new AbortController().signal;
    expect(await collect(prefetch.model.complete({ ...asked, signal }))).toEqual([text('Hello.')]);
    expect(await collect(prefetch.model.complete({ ...asked, signal }))).toEqual([text('Second.')]);
    const other: CompletionRequest = { ...asked, messages: [{ role: 'user', content: 'Bye.' }], signal };
    expect(await collect(prefetch.model.complete(other))).toEqual([text('Third.')]);
    expect(model.requests).toHaveLength(3);
  });

  it('a request that differs cancels the answer asked ahead', async () => {
    const model = new ScriptedModel(['hang', [text('Fresh.')]], undefined, 0, false);
    const prefetch = new ModelPrefetch(model, asked);
    const signal = new AbortController().signal;
    const changed: CompletionRequest = { ...asked, messages: [{ role: 'user', content: 'Hi there.' }], signal };
    expect(await collect(prefetch.model.complete(changed))).toEqual([text('Fresh.')]);
    expect(model.requests[0]!.signal.aborted).toBe(true);
  });

  it("the taker's abort cancels the model; a failed answer fails the taker, whose retry asks the model", async () => {
    const hanging = new ScriptedModel(['hang'], undefined, 0, false);
    const held = new ModelPrefetch(hanging, asked);
    const taker = new AbortController();
    const taking = collect(held.model.complete({ ...asked, signal: taker.signal }));
    taker.abort(new Error('barge-in'));
    await expect(taking).rejects.toThrow('barge-in');
    expect(hanging.requests[0]!.signal.aborted).toBe(true);

    const failing = new ScriptedModel([new ProviderFailure('openai', '503'), [text('Retried.')]], undefined, 0, false);
    const failed = new ModelPrefetch(failing, asked);
    const signal = new AbortController().signal;
    await expect(collect(failed.model.complete({ ...asked, signal }))).rejects.toThrow('503');
    expect(await collect(failed.model.complete({ ...asked, signal }))).toEqual([text('Retried.')]);
  });
});
