// A goal-driven caller against the OpenAI-compatible fake over real HTTP
// (LLM_URL set): the model plays the caller, told the goal and the persona,
// seeing the conversation with the roles turned round, until it says [DONE];
// the agent's turns go to the same model through the call's turn logic, its
// tool calls included; the test's checks read what happened.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, type TestUser } from '../../support/factories.js';
import { type OpenAiFake, startOpenAiFake, textAnswer, toolCallAnswer } from '../../support/openai-fake.js';

let t: TestApp;
let fake: OpenAiFake;
let user: TestUser;
beforeAll(async () => {
  fake = await startOpenAiFake();
  t = await createTestApp({ env: { LLM_URL: fake.url, LLM_API_KEY: fake.apiKey, LLM_MODEL: 'fake-model' } });
  user = await createVerifiedUser(t);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

type Message = { role: string; content: string | null };

describe('a goal-driven caller', () => {
  it('plays the caller with the model until its goal is reached, while the agent answers through its tools', async () => {
    fake.chatScripts.push(
      { events: textAnswer('Hi, when are you open on Saturdays?') }, // the caller
      { events: textAnswer('We are open from 9 to 1 on Saturdays.') }, // the agent
      { events: textAnswer('Great, thanks. Bye!') }, // the caller
      {
        events: toolCallAnswer([{ id: 'call_1', name: 'end_call', arguments: '{}' }], { text: 'Goodbye!' }),
      }, // the agent says goodbye and hangs up
      { events: textAnswer('') }, // after the tool call: nothing more to say
    );
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/agent-tests',
      headers: bearer(user.token),
      payload: {
        name: 'Saturday hours',
        agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
        caller: { goal: 'Find out the opening hours on Saturday', persona: 'A patient in a hurry' },
        expect: { says: ['9 to 1'], toolCalls: [{ name: 'end_call' }], outcome: 'completed', maxTurns: 4 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const started = await t.app.inject({
      method: 'POST',
      url: `/api/agent-tests/${created.json().id}/runs`,
      headers: bearer(user.token),
    });
    const { runId } = started.json();
    let run: { status: string; results: Array<Record<string, any>> } = { status: 'queued', results: [] };
    for (let i = 0; i < 500 && ['queued', 'running'].includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 10));
      run = (await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(user.token) })).json();
    }
    const result = run.results[0]!;
    expect(result.checks.filter((c: { passed: boolean }) => !c.passed)).toEqual([]);
    expect(result.transcript.map((l: { role: string; text: string }) => `${l.role}: ${l.text}`)).toEqual([
      'agent: Hello, this is Amy from the clinic.',
      'caller: Hi, when are you open on Saturdays?',
      'agent: We are open from 9 to 1 on Saturdays.',
      'caller: Great, thanks. Bye!',
      'agent: Goodbye!',
    ]);

    // The caller's requests: the goal and persona, the agent's lines as the other party's, no tools.
    const [callerFirst, agentFirst, callerSecond] = fake.chats.map(
      (c) => c.body as { messages: Message[]; tools?: unknown[] },
    );
    expect(callerFirst!.messages[0]!.content).toContain('Your goal: Find out the opening hours on Saturday');
    expect(callerFirst!.messages[0]!.content).toContain('Who you are: A patient in a hurry');
    expect(callerFirst!.messages.slice(1)).toEqual([{ role: 'user', content: 'Hello, this is Amy from the clinic.' }]);
    expect(callerFirst!.tools ?? []).toEqual([]);
    expect(callerSecond!.messages.slice(1).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    // The agent's request: its own system prompt and the caller's words as the user's, with its tools.
    expect(agentFirst!.messages[0]!.content).toContain('You are Amy');
    expect(agentFirst!.messages.at(-1)).toEqual({ role: 'user', content: 'Hi, when are you open on Saturdays?' });
    expect(JSON.stringify(agentFirst!.tools)).toContain('end_call');
  });
});
