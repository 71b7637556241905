// A pathway call through the Twilio fake and the OpenAI-compatible model
// fake (issue 43): the test plays Twilio (test/support/twilio-media.ts) and
// hears the digits node's keys as tones in the agent's audio; the model
// (the fake's script) is told the current step and moves the walk with
// set_variables; the webhook node's answer branches it; a key the caller
// presses takes a `keywords: ["1"]` edge without asking the model; the end
// node hangs up through Twilio's REST API. Runs on SQLite, and on PostgreSQL
// with DATABASE_URL.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DtmfDetector } from '../../../src/lib/dtmf.js';
import { OfflineCallerVoice } from '../../../src/providers/call-speech/offline-caller.js';
import type { TestApp } from '../../support/app.js';
import { type DeepgramFake, startDeepgramFake } from '../../support/deepgram-fake.js';
import { loggedEventErrors } from '../../support/event-schemas.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { type OpenAiFake, startOpenAiFake, textAnswer, toolCallAnswer } from '../../support/openai-fake.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { type TwilioFake, startTwilioFake } from '../../support/twilio-fake.js';
import { FakeTwilioCall, quiet, streamOf, twilioNumber } from '../../support/twilio-media.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';
import { twilioVoiceApp } from './voice-app.js';

const voice = OfflineCallerVoice.create();

let t: TestApp;
let twilio: TwilioFake;
let deepgram: DeepgramFake;
let openai: OpenAiFake;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  [twilio, deepgram, openai, receiver] = await Promise.all([
    startTwilioFake(),
    startDeepgramFake(),
    startOpenAiFake(),
    startWebhookReceiver(() => ({ status: 200, json: { status: 'shipped' } })),
  ]);
  ({ t } = await twilioVoiceApp({ twilio, deepgram, openai }));
}, 60_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([twilio?.close(), deepgram?.close(), openai?.close(), receiver?.close()]);
});

describe.skipIf(!voice)('a pathway call through Twilio and a real model', () => {
  it('sends the keys as tones, tells the model its step, moves by set_variables, branches on the webhook, ends on a key pressed', async () => {
    const user = await createFundedUser(t);
    const server = await registerServer(t, user);
    const numberId = await twilioNumber(t, twilio, user);
    const pathway = {
      name: 'Order status',
      start: 'menu',
      variables: { order_number: { type: 'number' }, status: { type: 'string' } },
      nodes: [
        { id: 'menu', type: 'digits', send: '2#' },
        { id: 'greet', type: 'conversation', say: 'Hello, what is your order number?', extract: ['order_number'] },
        {
          id: 'lookup',
          type: 'webhook',
          url: `${receiver.url}/orders`,
          method: 'POST',
          body: '{"order": {{order_number}}}',
          assign: { status: '$.status' },
        },
        {
          id: 'shipped',
          type: 'conversation',
          say: 'Order {{order_number}} has shipped. Press 1 if that is all.',
          prompt: 'Answer questions about the delivery',
        },
        { id: 'late', type: 'end', say: 'It is late, sorry.' },
        { id: 'bye', type: 'end', say: 'Goodbye!' },
      ],
      edges: [
        { from: 'menu', to: 'greet' },
        { from: 'greet', to: 'lookup' },
        { from: 'lookup', to: 'shipped', if: { var: 'status', op: 'eq', value: 'shipped' } },
        { from: 'lookup', to: 'late' },
        { from: 'shipped', to: 'bye', when: 'The caller has no more questions', keywords: ['1'] },
      ],
    };
    deepgram.transcripts.push('It is order 42.');
    openai.chatScripts.push(
      { events: toolCallAnswer([{ id: 'call_1', name: 'set_variables', arguments: '{"order_number": 42}' }]) },
      { events: textAnswer('') },
    );
    const jwt = await signPayload(server, {
      agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hi.' },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'pathway',
      pathway,
      phoneNumberId: numberId,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode, res.body).toBe(204);
    const sessionId = res.headers['x-session-id'] as string;
    const placed = twilio.calls.at(-1)!;
    const stream = streamOf(placed.twiml);
    const call = new FakeTwilioCall(stream.url, stream.token, placed.sid, twilio.accountSid);
    await call.open();
    await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(50), { timeout: 20_000, interval: 50 });
    await quiet(call);
    // The keys came first, as tones the other party's menu hears.
    const detector = new DtmfDetector();
    for (const frame of call.agentAudio()) detector.push(frame);
    expect(detector.heard.join('')).toBe('2#');

    const chatsBefore = openai.chats.length;
    await call.speak(await voice!.speak('It is order 42.', AbortSignal.timeout(15_000)));
    await vi.waitFor(() => expect(openai.chats.length).toBe(chatsBefore + 2), { timeout: 20_000, interval: 50 });
    await quiet(call);
    const first = openai.chats[chatsBefore]!.body as {
      messages: Array<{ role: string; content: string }>;
      tools: Array<{ function: { name: string; parameters: Record<string, unknown> } }>;
    };
    expect(first.messages[0]!.content).toContain('The current step is "greet"');
    expect(first.messages[0]!.content).not.toContain('Follow this conversation pathway');
    const setVariables = first.tools.find((tool) => tool.function.name === 'set_variables');
    expect(setVariables?.function.parameters).toMatchObject({
      properties: { order_number: { type: 'number' } },
      additionalProperties: false,
    });
    // The tool's answer says where the walk went and what the agent said there.
    const second = openai.chats[chatsBefore + 1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(second.messages[0]!.content).toContain('The current step is "shipped"');
    expect(JSON.parse(second.messages.at(-1)!.content)).toMatchObject({
      ok: true,
      node: 'shipped',
      said: 'Order 42 has shipped. Press 1 if that is all.',
    });
    const lookup = receiver.received.find((r) => r.path === '/orders')!;
    const secret = (
      await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(user.token) })
    ).json().secret;
    expect(new Webhook(secret).verify(lookup.body, lookup.headers as Record<string, string>)).toEqual({ order: 42 });

    // A key: the keywords edge is taken without the model; the end node's line, then Twilio hangs up.
    const chatsBeforeKey = openai.chats.length;
    call.press('1');
    await vi.waitFor(() => expect(placed.redirects.some((r) => r.includes('<Hangup/>'))).toBe(true), {
      timeout: 20_000,
      interval: 50,
    });
    call.stop();
    const view = await vi.waitFor(
      async () => {
        const v = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
        ).json();
        expect(v.status).toBe('completed');
        expect(v.transcript).toBeDefined();
        return v;
      },
      { timeout: 30_000, interval: 100 },
    );
    // The model was not asked about the key (later requests are the post-call analysis's).
    const askedAboutKey = openai.chats
      .slice(chatsBeforeKey)
      .some((c) =>
        (c.body.messages as Array<{ content?: string }>).some((m) => m.content?.includes('pressed 1 on the keypad')),
      );
    expect(askedAboutKey).toBe(false);
    expect(view.pathway.path.map((e: { node: string }) => e.node)).toEqual([
      'menu',
      'greet',
      'lookup',
      'shipped',
      'bye',
    ]);
    expect(view.pathway.variables).toEqual({ order_number: 42, status: 'shipped' });
    expect(view.toolCalls).toEqual([
      expect.objectContaining({ name: 'set_variables', arguments: { order_number: 42 } }),
    ]);
    expect(view.transcript).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'caller', text: '1', keypad: true, node: 'shipped' }),
        expect.objectContaining({ role: 'agent', text: 'Goodbye!', node: 'bye' }),
      ]),
    );
    // Every event the call produced (call_node included) is as the document publishes it.
    const logged = await loggedEventErrors(t.database.db, user.id);
    expect(logged.types).toEqual(expect.arrayContaining(['call_status', 'call_transcript', 'call_node']));
    expect(logged.errors).toEqual([]);
  }, 120_000);
});
