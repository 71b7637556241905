// The OpenAI-compatible chat model through the real adapter: streamed
// answers (SSE) from a local server speaking the OpenAI API.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderFailure } from '../../src/providers/failure.js';
import type { CompletionRequest, ModelDelta } from '../../src/providers/language-model/interface.js';
import { OpenAiLanguageModel, serverSentData } from '../../src/providers/language-model/openai.js';
import { type OpenAiFake, startOpenAiFake, textAnswer, toolCallAnswer } from '../support/openai-fake.js';
import { drain, until } from '../support/voice-audio.js';

let fake: OpenAiFake;
beforeAll(async () => {
  fake = await startOpenAiFake();
});
afterEach(() => {
  fake.chats.length = 0;
  fake.chatScripts.length = 0;
});
afterAll(() => fake.close());

const model = (config: Partial<ConstructorParameters<typeof OpenAiLanguageModel>[0]> = {}) =>
  new OpenAiLanguageModel({ url: fake.url, apiKey: fake.apiKey, model: 'gpt-4o-mini', ...config });
const tools: CompletionRequest['tools'] = [
  {
    name: 'check_availability',
    description: 'Free meeting slots on a day.',
    parameters: { type: 'object', properties: { date: { type: 'string' } } },
  },
  { name: 'end_call', description: 'Hang up.', parameters: { type: 'object', properties: {} } },
];
const request = (signal = new AbortController().signal): CompletionRequest => ({
  messages: [
    { role: 'system', content: 'You are a receptionist.' },
    { role: 'user', content: 'Can I book a meeting for Tuesday?' },
  ],
  tools,
  signal,
});

describe('OpenAiLanguageModel', () => {
  it('posts a streamed request with the tools and yields text deltas as they arrive, then done', async () => {
    fake.chatScripts.push({ events: textAnswer('We are open from nine to five.', 6) });
    const { values, error } = await drain(model().complete(request()));
    expect(error).toBeNull();
    const texts = values.filter((d): d is Extract<ModelDelta, { type: 'text' }> => d.type === 'text');
    expect(texts.length).toBe(5);
    expect(texts.map((d) => d.text).join('')).toBe('We are open from nine to five.');
    expect(values.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(fake.chats[0]!.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(fake.chats[0]!.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      messages: request().messages,
      tools: tools.map((t) => ({ type: 'function', function: t })),
    });
  });

  it('the first text arrives before the answer ends', async () => {
    fake.chatScripts.push({ events: textAnswer('One. Two. Three.', 5), delayMs: 100 });
    const started = Date.now();
    const iterator = model().complete(request())[Symbol.asyncIterator]();
    let first = await iterator.next();
    while (!first.done && first.value.type !== 'text') first = await iterator.next();
    const firstAt = Date.now() - started;
    let rest = await iterator.next();
    while (!rest.done) rest = await iterator.next();
    expect(firstAt).toBeLessThan(Date.now() - started - 200);
  });

  it('assembles tool calls streamed in fragments into whole calls, in index order', async () => {
    const args = JSON.stringify({ date: '2026-12-01' });
    fake.chatScripts.push({
      events: toolCallAnswer(
        [
          { id: 'call_abc', name: 'check_availability', arguments: args },
          { id: 'call_def', name: 'end_call', arguments: '' },
        ],
        { text: 'Let me check.', piece: 3 },
      ),
    });
    const { values, error } = await drain(model().complete(request()));
    expect(error).toBeNull();
    expect(
      values
        .filter((d) => d.type === 'text')
        .map((d) => (d as { text: string }).text)
        .join(''),
    ).toBe('Let me check.');
    expect(values.filter((d) => d.type !== 'text')).toEqual([
      {
        type: 'tool_call',
        call: { id: 'call_abc', type: 'function', function: { name: 'check_availability', arguments: args } },
      },
      {
        type: 'tool_call',
        call: { id: 'call_def', type: 'function', function: { name: 'end_call', arguments: '{}' } },
      },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('sends no tools array when there are none, and no key when none is configured', async () => {
    fake.chatScripts.push({ events: textAnswer('Hi.') });
    await drain(model({ apiKey: null }).complete({ ...request(), tools: [] }));
    expect(fake.chats[0]!.authorization).toBeUndefined();
    expect(fake.chats[0]!.body.tools).toBeUndefined();
  });

  it('401 is a refusal (not retryable); 429 and 500 are retryable', async () => {
    const wrong = await drain(model({ apiKey: 'sk-wrong' }).complete(request()));
    expect(wrong.error).toBeInstanceOf(ProviderFailure);
    expect(wrong.error).toMatchObject({
      provider: 'openai',
      retryable: false,
      message: expect.stringContaining('HTTP 401: Incorrect API key'),
    });
    fake.chatScripts.push({ status: 400 }, { status: 429 }, { status: 500 });
    expect((await drain(model().complete(request()))).error).toMatchObject({
      retryable: false,
      message: expect.stringContaining('HTTP 400'),
    });
    expect((await drain(model().complete(request()))).error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('HTTP 429'),
    });
    expect((await drain(model().complete(request()))).error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('HTTP 500'),
    });
  });

  it('a stream that breaks or ends before it finishes fails retryably, after the text that came', async () => {
    const partial = toolCallAnswer([{ id: 'call_1', name: 'check_availability', arguments: '{"date":"2026-12-01"}' }], {
      text: 'Let me see.',
    }).slice(0, -3);
    fake.chatScripts.push({ events: partial, then: 'drop' }, { events: partial, then: 'end' });
    for (let i = 0; i < 2; i++) {
      const { values, error } = await drain(model().complete(request()));
      expect(error).toBeInstanceOf(ProviderFailure);
      expect(error).toMatchObject({ provider: 'openai', retryable: true });
      // No half-assembled tool call is ever yielded.
      expect(values.every((d) => d.type === 'text')).toBe(true);
    }
    fake.chatScripts.push({ events: ['{"error":{"message":"overloaded"}}'] }, { events: ['not json'] });
    expect((await drain(model().complete(request()))).error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('overloaded'),
    });
    expect((await drain(model().complete(request()))).error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('not JSON'),
    });
  });

  it('a stalled stream ends when the caller aborts, and the connection is released', async () => {
    fake.chatScripts.push({ events: textAnswer('Hmm').slice(0, 2), then: 'stall' });
    const controller = new AbortController();
    const seen: ModelDelta[] = [];
    const done = (async () => {
      try {
        for await (const d of model().complete(request(controller.signal))) seen.push(d);
        return null;
      } catch (e) {
        return e;
      }
    })();
    await until(() => seen.length === 1, 5000, 'the first text');
    const started = Date.now();
    controller.abort();
    const error = await done;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(ProviderFailure);
    expect(error).toMatchObject({ provider: 'openai', message: expect.stringContaining('cancelled') });
    await until(() => fake.openStreams() === 0, 5000, 'the stream to close');
  });

  it('a server that never answers fails after the idle timeout; an abort before the headers fails at once', async () => {
    fake.chatScripts.push({ events: [], then: 'stall' });
    const slow = await drain(model({ idleTimeoutMs: 300 }).complete(request()));
    expect(slow.error).toMatchObject({ provider: 'openai', retryable: true });
    const controller = new AbortController();
    controller.abort();
    expect((await drain(model().complete(request(controller.signal)))).error).toMatchObject({
      provider: 'openai',
      message: expect.stringContaining('cancelled'),
    });
  });
});

describe('serverSentData', () => {
  it('splits events across any chunking, joins multi-line data, skips comments and other fields', async () => {
    const text = ': comment\r\nevent: x\r\ndata: {"a":1}\r\n\r\ndata: line one\ndata: line two\n\ndata:[DONE]\n\n';
    for (const size of [1, 2, 3, 7, text.length]) {
      const bytes = new TextEncoder().encode(text);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
          controller.close();
        },
      });
      const out: string[] = [];
      for await (const data of serverSentData(body)) out.push(data);
      expect(out).toEqual(['{"a":1}', 'line one\nline two', '[DONE]']);
    }
  });
});
