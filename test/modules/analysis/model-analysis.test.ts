// The analysis by a configured model (LLM_URL) against the local
// OpenAI-compatible fake over real HTTP: one request with the analysis tool
// forced and the agent's fields as its JSON Schema; an answer that does not
// match the schema is asked for once more, then the analysis fails with the
// reason, and the call itself stays as it ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type OpenAiFake, startOpenAiFake, toolCallAnswer } from '../../support/openai-fake.js';
import { callConfig } from '../calls/support.js';
import { analysedCall, endedCall, storeRecords } from './support.js';

let t: TestApp;
let fake: OpenAiFake;
beforeAll(async () => {
  fake = await startOpenAiFake();
  t = await createTestApp({
    env: { LLM_URL: fake.url, LLM_API_KEY: fake.apiKey, LLM_MODEL: 'fake-model' },
    config: callConfig(),
  });
  await t.app.ready();
  t.services.platform.jobs.start();
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const agent = {
  name: 'Amy',
  analysis: {
    successCriteria: 'The caller booked a table',
    schema: {
      type: 'object' as const,
      properties: {
        party_size: { type: 'integer' as const, description: 'How many people' },
        day: { type: 'string' as const, format: 'date' as const },
      },
      required: ['party_size'],
    },
  },
};
const transcript = [
  { role: 'agent', text: 'Hello, this is Amy from the bistro.' },
  { role: 'caller', text: 'A table for four on Friday please, and call me back about parking.' },
  { role: 'agent', text: 'Booked for four on Friday.' },
];
const answer = (args: Record<string, unknown>) => ({
  events: toolCallAnswer([{ id: 'call_1', name: 'record_call_analysis', arguments: JSON.stringify(args) }]),
});
const good = {
  summary: 'Booked a table for four on Friday; the caller wants a call about parking.',
  success: true,
  successReason: 'a table was booked',
  data: { party_size: 4, day: '2026-12-04' },
  tasks: [{ title: 'Call back about parking', dueDate: '2026-12-04' }],
  sentiment: 'positive',
};

describe('the analysis by the configured model', () => {
  it('sends one request with the schema tool forced and stores the validated answer', async () => {
    const user = await createVerifiedUser(t);
    fake.chats.length = 0;
    fake.chatScripts.push(answer(good));
    const sessionId = await endedCall(t, user, { agent, transcript });
    const call = await analysedCall(t, user, sessionId);
    expect(call.analysis).toEqual({ status: 'completed', by: 'model', ...good, analysedAt: expect.any(String) });
    expect(fake.chats).toHaveLength(1);
    const body = fake.chats[0]!.body as {
      model: string;
      tools: Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>;
      tool_choice: unknown;
      messages: Array<{ role: string; content: string }>;
    };
    expect(fake.chats[0]!.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(body.model).toBe('fake-model');
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'record_call_analysis' } });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0]!.function.parameters.properties.data).toEqual({
      type: 'object',
      properties: {
        party_size: { type: 'integer', description: 'How many people' },
        day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
      },
      additionalProperties: false,
      required: ['party_size'],
    });
    expect(body.messages[0]!.content).toContain('Success criteria: The caller booked a table');
    expect(body.messages[1]!.content).toContain('Caller: A table for four on Friday please');
    expect(await storeRecords(t, user, 'tasks')).toEqual([
      { title: 'Call back about parking', dueDate: '2026-12-04', sessionId, contact: { name: 'Grace' } },
    ]);
  });

  it('asks once more after an answer that does not match the schema, telling the model what was wrong', async () => {
    const user = await createVerifiedUser(t);
    fake.chats.length = 0;
    fake.chatScripts.push(answer({ ...good, data: { party_size: 'four' } }), answer(good));
    const sessionId = await endedCall(t, user, { agent, transcript });
    const call = await analysedCall(t, user, sessionId);
    expect(call.analysis).toMatchObject({ status: 'completed', by: 'model', data: good.data });
    expect(fake.chats).toHaveLength(2);
    const retry = fake.chats[1]!.body as { messages: Array<{ role: string; content: string | null }> };
    const told = retry.messages.at(-1)!;
    expect(told.role).toBe('tool');
    expect(told.content).toContain('/data/party_size must be integer');
  });

  it('records a failed analysis after two invalid answers, and when the model refuses; the call stays completed', async () => {
    const user = await createVerifiedUser(t);
    fake.chats.length = 0;
    fake.chatScripts.push(answer({ ...good, sentiment: 'ecstatic' }), answer({ summary: 'no fields' }));
    const first = await endedCall(t, user, { agent, transcript });
    const call = await analysedCall(t, user, first);
    expect(call.status).toBe('completed');
    expect(call.analysis).toMatchObject({
      status: 'failed',
      by: 'model',
      success: null,
      summary: null,
      data: {},
      tasks: [],
    });
    expect(call.analysis.reason).toMatch(/^the answer does not match the schema: .* \(asked twice\)$/);
    expect(fake.chats).toHaveLength(2);

    fake.chatScripts.push({ status: 500 });
    const second = await endedCall(t, user, { agent, transcript });
    const refused = await analysedCall(t, user, second);
    expect(refused.analysis).toMatchObject({ status: 'failed', by: 'model' });
    expect(refused.analysis.reason).toContain('the model failed');
    const events = (
      await t.database.db
        .selectFrom('events')
        .select('payload')
        .where('user_id', '=', user.id)
        .where('type', '=', 'call_analysis')
        .orderBy('id')
        .execute()
    ).map((e) => JSON.parse(e.payload));
    expect(events.map((e) => [e.session_id, e.status, e.success])).toEqual([
      [first, 'failed', null],
      [second, 'failed', null],
    ]);
    // No tasks from failed analyses; the metrics say nothing of success.
    expect(await storeRecords(t, user, 'tasks')).toEqual([]);
    expect((await storeRecords(t, user, 'performance-metrics')).map((m) => m.success)).toEqual([null, null]);
  });
});
