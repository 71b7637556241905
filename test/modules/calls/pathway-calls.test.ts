// Pathway calls end to end (issue 43, DESIGN.md "Conversational pathways",
// "Custom tools and call variables"): POST /api/session/call with an inline
// pathway and custom tools, carried by the sandbox carrier over loopback at
// real pace (its simulated caller's own words stand for recognition), walked
// by the sandbox dialogue engine. The webhook node and the tools call a local
// server; their signatures are checked with the official `standardwebhooks`
// library. Runs on SQLite, and on PostgreSQL with DATABASE_URL.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SandboxScript } from '../../../src/providers/telephony/interface.js';
import type { TestApp } from '../../support/app.js';
import { bearer } from '../../support/factories.js';
import { signPayload } from '../../support/signed-payloads.js';
import { type ReceivedWebhook, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { type Clinic, type Line, canSpeak, clinic, ended, sandboxCarrierApp } from './sandbox-support.js';

const contactPhone = '+14155550123';

/** Order status: keys for the other side's menu, a question, a signed lookup, a branch on its answer, a text, an end. */
function orderPathway(receiverUrl: string) {
  return {
    name: 'Order status',
    start: 'menu',
    variables: {
      customer_id: { type: 'string' },
      order_number: { type: 'number' },
      status: { type: 'enum', values: ['shipped', 'delayed'] },
      wants_text: { type: 'boolean' },
    },
    nodes: [
      { id: 'menu', type: 'digits', send: '1#' },
      {
        id: 'greet',
        type: 'conversation',
        say: 'Hello {{contact.name}}, what is your order number?',
        extract: ['order_number'],
      },
      {
        id: 'lookup',
        type: 'webhook',
        url: `${receiverUrl}/orders`,
        method: 'POST',
        body: '{"order": {{order_number}}, "phone": "{{contact.phone}}", "customer": "{{customer_id}}"}',
        assign: { status: '$.status' },
      },
      {
        id: 'shipped',
        type: 'conversation',
        say: 'Order {{order_number}} has shipped. Shall I text you the tracking link?',
        extract: ['wants_text'],
      },
      { id: 'delayed', type: 'end', say: 'Order {{order_number}} is delayed, sorry. Goodbye.' },
      {
        id: 'text',
        type: 'sms',
        text: 'Tracking for order {{order_number}}: https://track.example.com/{{order_number}}',
      },
      { id: 'bye', type: 'end', say: 'Done. Goodbye!' },
    ],
    edges: [
      { from: 'menu', to: 'greet' },
      { from: 'greet', to: 'lookup' },
      { from: 'lookup', to: 'shipped', if: { var: 'status', op: 'eq', value: 'shipped' } },
      { from: 'lookup', to: 'delayed' },
      { from: 'shipped', to: 'text', if: { var: 'wants_text', op: 'eq', value: true } },
      { from: 'shipped', to: 'bye', if: { var: 'wants_text', op: 'eq', value: false } },
      { from: 'text', to: 'bye' },
    ],
  };
}

describe.skipIf(!canSpeak)('pathway calls through the sandbox carrier', () => {
  let t: TestApp;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    t = await sandboxCarrierApp({ STT_PROVIDER: 'none', CALL_RECORDING: '0' });
    receiver = await startWebhookReceiver((request) => {
      if (request.path.split('?')[0] === '/orders')
        return { status: 200, json: { status: 'shipped', eta: '2026-12-04' } };
      if (request.path === '/refund') return 500;
      if (request.path === '/parcel') return 'hang';
      return 404;
    });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  }, 60_000);

  async function place(c: Clinic, claims: Record<string, unknown>, script: SandboxScript) {
    const jwt = await signPayload(c.server, {
      agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello, this is Amy.' },
      contact: { name: 'Grace', phone: contactPhone },
      phoneNumberId: c.numberId,
      ...claims,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(c.user.token),
      payload: { server: c.server.name, jwt, script },
    });
    expect(res.statusCode, res.body).toBe(204);
    return res.headers['x-session-id'] as string;
  }

  const secretOf = async (c: Clinic) =>
    (await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(c.user.token) })).json()
      .secret as string;

  it('walks the graph: digits heard by the carrier, the question, a signed webhook, a branch on its answer, an SMS charged, the end', async () => {
    const c = await clinic(t);
    const sessionId = await place(
      c,
      { type: 'pathway', pathway: orderPathway(receiver.url), variables: { customer_id: 'cus_881' } },
      ['It is order 42', 'Yes please'],
    );
    // The simulated party hears the keys in the agent's audio while the call runs.
    const { provider_call_id: callSid } = await t.database.db
      .selectFrom('call_sessions')
      .select('provider_call_id')
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    await vi.waitFor(
      () => {
        const caller = t.services.voice.controlFor(callSid!)?.caller?.(callSid!);
        expect(caller?.heardDigits?.()).toBe('1#');
      },
      { timeout: 30_000, interval: 100 },
    );
    const view = await ended(t, c.user, sessionId, 120_000);
    expect(view).toMatchObject({ status: 'completed', outcome: 'completed' });
    expect(view.pathway.path.map((e: { node: string }) => e.node)).toEqual([
      'menu',
      'greet',
      'lookup',
      'shipped',
      'text',
      'bye',
    ]);
    expect(view.pathway.path[3].edge).toBe('/edges/2');
    expect(view.pathway.variables).toEqual({
      customer_id: 'cus_881',
      order_number: 42,
      status: 'shipped',
      wants_text: true,
    });
    // An inline pathway: the record carries its document to draw the path on.
    expect(view.pathway.document.name).toBe('Order status');
    const lines = view.transcript as Array<Line & { node?: string }>;
    // The greeting is the first agent line; under load the simulated caller may speak over it, so only its start
    // ("Hello") is heard (CI, 7 Dec: the greeting cut after "Hello", interrupted), and its node is still the greeting's.
    expect(lines.find((l) => l.role === 'agent')?.node, JSON.stringify(lines)).toBe('greet');
    expect(lines.find((l) => l.role === 'agent' && l.text.includes('Order 42 has shipped'))?.node).toBe('shipped');
    expect(lines.at(-1)).toMatchObject({ role: 'agent', text: 'Done. Goodbye!', node: 'bye' });

    // The webhook node: one POST of its filled body, signed with the account's secret.
    const lookups = receiver.received.filter((r: ReceivedWebhook) => r.path.startsWith('/orders'));
    expect(lookups).toHaveLength(1);
    expect(JSON.parse(lookups[0]!.body)).toEqual({ order: 42, phone: contactPhone, customer: 'cus_881' });
    const secret = await secretOf(c);
    expect(new Webhook(secret).verify(lookups[0]!.body, lookups[0]!.headers as Record<string, string>)).toEqual(
      JSON.parse(lookups[0]!.body),
    );
    // A forged copy does not verify.
    expect(() =>
      new Webhook(secret).verify(lookups[0]!.body.replace('42', '43'), lookups[0]!.headers as Record<string, string>),
    ).toThrow();

    // The SMS node: sent from the call's number to the contact, through the SMS service (charged like any SMS).
    const outbox = (
      await t.app.inject({ method: 'GET', url: `/api/sandbox/outbox?to=${encodeURIComponent(contactPhone)}` })
    ).json();
    expect(outbox.map((m: { body: string }) => m.body)).toContain(
      'Tracking for order 42: https://track.example.com/42',
    );
    const sms = await t.database.db
      .selectFrom('sms_messages')
      .select(['to_number', 'price_cents'])
      .where('user_id', '=', c.user.id)
      .execute();
    expect(sms).toEqual([{ to_number: contactPhone, price_cents: expect.any(Number) }]);
    expect(Number(sms[0]!.price_cents)).toBeGreaterThan(0);

    // Each move was a call_node event.
    const events = await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', c.user.id)
      .where('type', '=', 'call_node')
      .orderBy('id')
      .execute();
    expect(events.map((e) => JSON.parse(e.payload))).toEqual(
      ['menu', 'greet', 'lookup', 'shipped', 'text', 'bye'].map((node, i, all) => ({
        session_id: sessionId,
        node,
        ...(i ? { from: all[i - 1] } : {}),
        at: expect.any(String),
      })),
    );
  }, 180_000);

  it('ends failed with outcome pathway_error when the walk cannot go on; a custom tool that fails twice is apologised for', async () => {
    const c = await clinic(t);
    // The lookup answers "shipped"; this pathway only leads on from it when the order is delayed.
    const stuck = {
      name: 'Stuck',
      start: 'lookup',
      variables: { status: { type: 'string' } },
      nodes: [
        { id: 'lookup', type: 'webhook', url: `${receiver.url}/orders`, method: 'GET', assign: { status: '$.status' } },
        { id: 'bye', type: 'end', say: 'Goodbye.' },
      ],
      edges: [{ from: 'lookup', to: 'bye', if: { var: 'status', op: 'eq', value: 'delayed' } }],
    };
    const failed = await place(c, { type: 'pathway', pathway: stuck }, ['Hello?']);
    await ended(t, c.user, failed, 60_000);
    // A failed call's record is written with its final report, just after the status.
    const view = await vi.waitFor(
      async () => {
        const v = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${failed}`, headers: bearer(c.user.token) })
        ).json();
        expect(v.transcript).toBeDefined();
        return v;
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(view).toMatchObject({ status: 'failed', outcome: 'pathway_error' });
    expect(view.pathway.path.map((e: { node: string }) => e.node)).toEqual(['lookup']);
    expect(view.pathway.variables).toEqual({ status: 'shipped' });
    expect((view.transcript as Line[]).map((l) => l.text).join(' ')).toContain("I'm sorry, I can't continue this call");

    // A prompt call with a custom tool the sandbox engine calls by its keywords: its 500 is retried once, then apologised for.
    const refunds = () => receiver.received.filter((r: ReceivedWebhook) => r.path === '/refund');
    const tool = {
      type: 'http',
      name: 'request_refund',
      description: 'Asks for a refund of an order',
      parameters: { type: 'object', properties: { order: { type: 'integer' } }, required: ['order'] },
      url: `${receiver.url}/refund`,
      keywords: ['refund'],
      speak: 'One moment while I ask for that.',
      headers: { Authorization: 'Bearer sk_refunds_123' },
    };
    // And one that never answers: its speak line while it runs, then the apology when its 1.5 s are up.
    const parcel = {
      type: 'http',
      name: 'track_parcel',
      description: 'Tracks a parcel',
      parameters: { type: 'object', properties: { parcel: { type: 'integer' } } },
      url: `${receiver.url}/parcel`,
      keywords: ['parcel'],
      speak: 'Let me find your parcel.',
      timeoutMs: 1500,
    };
    const prompt = await place(c, { type: 'prompt', prompt: 'Help with refunds.', tools: [tool, parcel] }, [
      'I want a refund for order 77',
      'Where is my parcel 12',
    ]);
    const second = await ended(t, c.user, prompt, 90_000);
    expect(second.status).toBe('completed');
    expect(refunds()).toHaveLength(2);
    const secret = await secretOf(c);
    for (const attempt of refunds()) {
      expect(attempt.headers.authorization).toBe('Bearer sk_refunds_123');
      const verified = new Webhook(secret).verify(attempt.body, attempt.headers as Record<string, string>) as Record<
        string,
        unknown
      >;
      expect(verified).toMatchObject({ order: 77, _call: { call: { session_id: prompt, direction: 'outbound' } } });
    }
    expect(second.toolCalls).toEqual([
      expect.objectContaining({
        name: 'request_refund',
        arguments: { order: 77 },
        result: { error: 'HTTP 500 (after a retry)' },
      }),
      expect.objectContaining({
        name: 'track_parcel',
        arguments: { parcel: 12 },
        result: { error: 'timed out after 1500 ms' },
      }),
    ]);
    const said = (second.transcript as Line[]).filter((l) => l.role === 'agent').map((l) => l.text);
    expect(said).toContain("Let me find your parcel. I'm sorry, I couldn't do that right now.");
    expect((second.transcript as Line[]).map((l) => l.text).join(' ')).toContain(
      "I'm sorry, I couldn't do that right now.",
    );
  }, 180_000);
});
