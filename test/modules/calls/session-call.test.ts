// POST /api/session/call over a real socket: a signed payload starts a sandbox
// call that runs to completed, with call_status events on the session's
// stream, verified webhook deliveries, usage once in the billing state and an
// encrypted record; forged, expired, replayed and foreign references refused.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseCallPayload } from '../../../src/modules/calls/session-service.js';
import { examplePathway } from '../../../src/modules/pathways/examples.js';
import type { AssembledCall } from '../../../src/providers/audio/interface.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser, createVerifiedUser } from '../../support/factories.js';
import { type RegisteredServer, encryptToService, registerServer, signPayload } from '../../support/signed-payloads.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { eventually, stream } from '../events/support.js';
import { callConfig, callRecords } from './support.js';
import { insertPhoneNumber } from '../../support/phone-numbers.js';

let t: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function addNumber(user: TestUser, phone: string, voice = true): Promise<string> {
  return (await insertPhoneNumber(t, user.id, { provider: 'sandbox', phone, name: phone, voice, now: t.clock.now() }))
    .id;
}

const claims = (extra: Record<string, unknown> = {}) => ({
  use: 'call-session',
  agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
  contact: { name: 'Grace', phone: '+14155550123', fields: { appointment: 'Tuesday 10:00' } },
  type: 'prompt',
  prompt: 'Confirm the appointment.',
  ...extra,
});

const start = (user: TestUser, server: string, jwt: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/api/session/call',
    headers: { ...bearer(user.token), ...headers },
    payload: { server, jwt },
  });

async function setup(): Promise<{ user: TestUser; server: RegisteredServer; numberId: string }> {
  const user = await createFundedUser(t);
  const server = await registerServer(t, user);
  const numberId = await addNumber(user, `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`);
  return { user, server, numberId };
}

describe('POST /api/session/call', () => {
  it('runs a signed, encrypted call to completed: events on the session stream, verified webhooks, usage once, an encrypted record', async () => {
    const { user, server, numberId } = await setup();
    const secret = (
      await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(user.token) })
    ).json().secret;
    const kb = await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: 'Clinic' },
    });
    expect(kb.statusCode, kb.body).toBe(200);
    const serviceKey = (await t.app.inject({ method: 'GET', url: '/api/server', headers: bearer(user.token) })).json();
    const jws = await signPayload(
      server,
      claims({
        knowledgeBase: { id: kb.json().id },
        phoneNumberId: numberId,
        webhook: `${receiver.url}/hook?user=${user.id}`,
      }),
    );
    const jwe = await encryptToService(jws, serviceKey);
    const key = randomUUID();
    const res = await start(user, server.name, jwe, { 'idempotency-key': key });
    expect(res.statusCode, res.body).toBe(204);
    const sessionId = res.headers['x-session-id'] as string;
    expect(sessionId).toBeTruthy();
    // A retry with the same Idempotency-Key answers the same session without starting another call (or using the jti again).
    const retry = await start(user, server.name, jwe, { 'idempotency-key': key });
    expect(retry.statusCode).toBe(204);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-session-id']).toBe(sessionId);
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toHaveLength(1);

    const sse = await stream(t, user.token, `call_status?session_id=${sessionId}`, {
      headers: { 'last-event-id': '0' },
    });
    const events = await sse.waitForEvents(4, 20_000);
    sse.close();
    const payloads = events.map((e) => JSON.parse(e.data));
    expect(payloads.map((p) => p.status)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
    expect(payloads[3].transcript[0]).toEqual({ role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' });

    await receiver.waitFor((all) => all.filter((r) => r.path.includes(user.id)).length >= 4);
    const hooks = receiver.received.filter((r) => r.path.includes(user.id));
    expect(hooks).toHaveLength(4);
    for (const h of hooks)
      expect(
        (new Webhook(secret).verify(h.body, h.headers as Record<string, string>) as { data: { session_id: string } })
          .data.session_id,
      ).toBe(sessionId);

    const session = () =>
      t.database.db.selectFrom('call_sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow();
    await eventually(async () => (await session()).finished_at !== null, 5000, 'call accounted for');
    const summary = JSON.parse((await session()).summary);
    expect(summary.voice).toEqual({ provider: 'local', voiceId: expect.any(String) });
    // Usage moved once: one outbound call and its seconds in this period's billing state.
    const state = (
      await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })
    ).json();
    expect(state.usageRaw).toMatchObject({ calls_outbound: 1, seconds_outbound: payloads[3].duration_seconds });
    const records = await callRecords(t, user);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      session_id: sessionId,
      status: 'completed',
      to: '+14155550123',
      contact: { name: 'Grace' },
    });
  }, 30_000);

  it('assembles the system prompt, persona voice and knowledge tool', async () => {
    const { user } = await setup();
    const kb = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'Clinic' },
      })
    ).json();
    const call = await t.services.calls.callSessions.sessions.assemble(
      user.id,
      parseCallPayload(
        claims({
          type: 'pathway',
          pathway: { name: 'Confirm', steps: ['Greet', 'Confirm the time'] },
          knowledgeBase: { id: kb.id },
        }),
      ),
    );
    expect(call.systemPrompt).toContain('1. Greet');
    expect(call.systemPrompt).toContain('appointment: Tuesday 10:00');
    expect(call.tools.map((x) => x.name)).toEqual(['search_knowledge']);
    expect(call.tools[0]!.parameters).toMatchObject({ type: 'object', required: ['query'] });
  });

  it('refuses forgery, an unknown server, expiry, replay, foreign references and callers without a voice number', async () => {
    const { user, server } = await setup();
    const other = await setup();
    const otherKb = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(other.user.token),
        payload: { name: 'Theirs' },
      })
    ).json();

    const forged = await signPayload(other.server, claims());
    expect((await start(user, server.name, forged)).json().code).toBe('invalid_token');
    expect((await start(user, 'nope', await signPayload(server, claims()))).statusCode).toBe(404);
    expect(
      (await start(user, server.name, await signPayload(server, claims(), { now: Date.now() - 3600_000 }))).json().code,
    ).toBe('invalid_token');
    expect(
      (await start(user, server.name, await signPayload(server, { ...claims(), use: 'persona-preview' }))).json().code,
    ).toBe('invalid_token');
    // The spec names no `use` claim: a payload without one is a call session.
    const { use: _use, ...withoutUse } = claims();
    expect((await start(user, server.name, await signPayload(server, withoutUse))).statusCode).toBe(204);

    const once = await signPayload(server, claims({ webhook: `${receiver.url}/x` }));
    expect((await start(user, server.name, once)).statusCode).toBe(204);
    const replay = await start(user, server.name, once);
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('invalid_token');

    // An ill-formed payload is 400 invalid_input and does not use its jti.
    const jti = randomUUID();
    expect(
      (await start(user, server.name, await signPayload(server, claims({ type: 'pathway' }), { jti }))).json().code,
    ).toBe('invalid_input');
    expect((await start(user, server.name, await signPayload(server, claims(), { jti }))).statusCode).toBe(204);

    for (const extra of [
      { phoneNumberId: other.numberId },
      { knowledgeBase: { id: otherKb.id } },
      { integrations: ['int_not_mine'] },
    ]) {
      const r = await start(user, server.name, await signPayload(server, claims(extra)));
      expect(r.statusCode, JSON.stringify(extra)).toBe(404);
    }

    const bare = await createVerifiedUser(t);
    const bareServer = await registerServer(t, bare);
    await addNumber(bare, '+14155559876', false);
    const none = await start(bare, bareServer.name, await signPayload(bareServer, claims()));
    expect(none.statusCode).toBe(409);
    expect(none.json().code).toBe('conflict');
  });

  it('costs money: without plan or balance 402 insufficient_funds (no session), premium destinations 400, beyond the concurrent limit 429', async () => {
    const user = await createVerifiedUser(t);
    const server = await registerServer(t, user);
    await addNumber(user, `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`);
    const broke = await start(user, server.name, await signPayload(server, claims()));
    expect(broke.statusCode).toBe(402);
    expect(broke.json()).toEqual({ message: expect.stringContaining('top up'), code: 'insufficient_funds' });
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);

    const premium = await start(
      user,
      server.name,
      await signPayload(server, claims({ contact: { name: 'Grace', phone: '+18765550123' } })),
    );
    expect(premium.statusCode).toBe(400);
    expect(premium.json().code).toBe('unsupported_destination');

    // Funded, with as many calls open as CALL_CONCURRENCY_PER_USER allows (5 by default): the next is 429.
    const funded = await setup();
    for (let i = 0; i < t.config.billing.callConcurrencyPerUser; i++) {
      expect(
        await t.services.calls.charges!.authorizeCall(funded.user.id, {
          ref: `busy-${funded.user.id}-${i}`,
          direction: 'outbound',
          number: '+14155550123',
          maxDurationSeconds: 60,
        }),
      ).toMatchObject({ ok: true });
    }
    const busy = await start(funded.user, funded.server.name, await signPayload(funded.server, claims()));
    expect(busy.statusCode).toBe(429);
    expect(busy.json().code).toBe('concurrency_limit');
  });
});

describe('POST /api/session/call: pathways, custom tools and variables (issue 43)', () => {
  /** The assembled call each session was handed to the audio server with. */
  const handedOver = new Map<string, AssembledCall>();
  beforeAll(() => {
    const audio = t.services.providers.audio;
    const startCall = audio.startCall.bind(audio);
    vi.spyOn(audio, 'startCall').mockImplementation(async (sessionId, call, progressUrl) => {
      handedOver.set(sessionId, call);
      return startCall(sessionId, call, progressUrl);
    });
  });
  afterAll(() => vi.restoreAllMocks());

  async function placed(
    user: TestUser,
    server: RegisteredServer,
    extra: Record<string, unknown>,
    jti?: string,
  ): Promise<AssembledCall> {
    const res = await start(user, server.name, await signPayload(server, claims(extra), jti ? { jti } : {}));
    expect(res.statusCode, res.body).toBe(204);
    return handedOver.get(res.headers['x-session-id'] as string)!;
  }
  const storePathway = async (owner: TestUser, document: unknown) =>
    (await t.services.data.records.create(owner.id, 'conversational-pathways', Buffer.from(JSON.stringify(document))))
      .id;

  const lookupTool = {
    type: 'http',
    name: 'check_order',
    description: 'Looks an order up by its number',
    parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    url: 'https://api.example.com/orders/lookup',
    headers: { Authorization: 'Bearer sk_live_abc123' },
  };

  it('carries an inline document, the variables filled into the first message and the declared tools, headers sealed', async () => {
    const { user, server } = await setup();
    const call = await placed(user, server, {
      agent: {
        name: 'Amy',
        instructions: 'Be brief with {{first_name}}.',
        firstMessage:
          'Hello {{first_name}}, about your {{contact.fields.appointment}} visit: {{missing}}is {{vip}} right?',
      },
      type: 'pathway',
      pathway: examplePathway,
      variables: { first_name: 'Grace', balance: 12.5, vip: true },
      tools: [lookupTool],
    });
    expect(call.pathway).toEqual({ id: null, name: 'Order status', document: examplePathway });
    expect(call.firstMessage).toBe('Hello Grace, about your Tuesday 10:00 visit: is true right?');
    expect(call.systemPrompt).toContain('Be brief with Grace.');
    expect(call.systemPrompt).toContain('This call follows the conversation pathway "Order status".');
    expect(call.variables).toEqual({ first_name: 'Grace', balance: 12.5, vip: true });
    expect(call.contactFields).toEqual({ appointment: 'Tuesday 10:00' });
    expect(call.warnings).toEqual(['{{missing}} has no value: filled with nothing']);
    // Declared with its defaults; the header value sealed (the master key opens it), never in clear.
    expect(call.customTools).toEqual([
      {
        ...lookupTool,
        method: 'POST',
        timeoutMs: 5000,
        assign: {},
        keywords: [],
        headers: { Authorization: expect.any(String) },
      },
    ]);
    const sealed = (call.customTools![0]!.headers as Record<string, string>).Authorization!;
    expect(sealed).not.toContain('sk_live');
    expect(t.services.platform.secretBox.openText(sealed)).toBe('Bearer sk_live_abc123');
    // Not a tool the model is offered directly: the voice integration runs custom tools.
    expect(call.tools).toEqual([]);
  });

  it("resolves { id } from the caller's conversational-pathways store; another user's id is 404", async () => {
    const { user, server } = await setup();
    const id = await storePathway(user, examplePathway);
    const call = await placed(user, server, { type: 'pathway', pathway: { id } });
    expect(call.pathway).toEqual({ id, name: 'Order status', document: examplePathway });

    const other = await setup();
    const theirs = await storePathway(other.user, examplePathway);
    const refused = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: { id: theirs } })),
    );
    expect(refused.statusCode).toBe(404);
    expect(refused.json().code).toBe('not_found');
    // A stored pathway that is not valid: 422 after reading it.
    const invalid = await storePathway(user, { ...examplePathway, start: 'nowhere' });
    const bad = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: { id: invalid } })),
    );
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual(
      expect.arrayContaining([{ path: '/start', message: expect.stringContaining('nowhere') }]),
    );
  });

  it('refuses an invalid inline pathway with 422 invalid_pathway and every error, its jti unspent', async () => {
    const { user, server } = await setup();
    const jti = randomUUID();
    const invalid = {
      ...examplePathway,
      start: 'hello',
      edges: [...examplePathway.edges, { from: 'greet', to: 'nowhere' }],
    };
    const res = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: invalid }), { jti }),
    );
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'invalid_pathway', message: expect.stringContaining('errors') });
    expect(res.json().errors).toEqual(
      expect.arrayContaining([
        { path: '/start', message: expect.stringContaining('hello') },
        { path: '/edges/3/to', message: expect.stringContaining('nowhere') },
      ]),
    );
    // The same jti, now with the pathway fixed: accepted (the refusal did not spend it).
    expect((await placed(user, server, { type: 'pathway', pathway: examplePathway }, jti)).pathway?.name).toBe(
      'Order status',
    );
    // A named tool the call does not have is known only now: 422 at the node.
    const namesTool = {
      ...examplePathway,
      nodes: [
        { ...examplePathway.nodes[0]!, tools: ['check_order', 'search_knowledge'] },
        ...examplePathway.nodes.slice(1),
      ],
    };
    const unknownTool = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: namesTool })),
    );
    expect(unknownTool.statusCode).toBe(422);
    expect(unknownTool.json().errors).toEqual([
      { path: '/nodes/0/tools/0', message: expect.stringContaining('check_order') },
    ]);
    expect(
      (await placed(user, server, { type: 'pathway', pathway: namesTool, tools: [lookupTool] })).pathway?.document,
    ).toEqual(namesTool);
  });

  it("declares a pathway node's inline tools as the call's: headers sealed, problems named at their path", async () => {
    const { user, server } = await setup();
    const withInline = {
      ...examplePathway,
      nodes: [
        { ...examplePathway.nodes[0]!, tools: ['search_knowledge', lookupTool] },
        ...examplePathway.nodes.slice(1),
      ],
    };
    const call = await placed(user, server, { type: 'pathway', pathway: withInline });
    const inline = (call.pathway!.document.nodes as Array<{ tools?: unknown[] }>)[0]!.tools![1] as {
      headers: Record<string, string>;
    };
    expect(inline).toMatchObject({ name: 'check_order', method: 'POST', timeoutMs: 5000 });
    expect(t.services.platform.secretBox.openText(inline.headers.Authorization!)).toBe('Bearer sk_live_abc123');
    const clash = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: withInline, tools: [lookupTool] })),
    );
    expect(clash.statusCode).toBe(400);
    expect(clash.json().message).toContain('pathway.nodes[0].tools[1].name');
  });

  it('keeps the old { name?, steps } working: the steps in the system prompt, filled, and its linear document', async () => {
    const { user, server } = await setup();
    const call = await placed(user, server, {
      type: 'pathway',
      pathway: { name: 'Confirm', steps: ['Greet {{first_name}}', 'Confirm the time'] },
      variables: { first_name: 'Grace' },
    });
    expect(call.systemPrompt).toContain(
      'Follow this conversation pathway ("Confirm"), step by step:\n1. Greet Grace\n2. Confirm the time',
    );
    expect(call.pathway).toMatchObject({
      id: null,
      name: 'Confirm',
      document: { start: 'step-1', variables: { first_name: { type: 'string' } } },
    });
    expect((call.pathway!.document.nodes as Array<{ id: string }>).map((n) => n.id)).toEqual([
      'step-1',
      'step-2',
      'end',
    ]);
    // A step naming a variable the call does not have is an error at the step.
    const res = await start(
      user,
      server.name,
      await signPayload(server, claims({ type: 'pathway', pathway: { steps: ['Greet {{first_name}}'] } })),
    );
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: '/steps/0', message: expect.stringContaining('{{first_name}}') }]);
  });

  it('refuses malformed tools and variables with 400 naming the field, before the jti is spent', async () => {
    const { user, server } = await setup();
    const jti = randomUUID();
    const { description: _d, ...noDescription } = lookupTool;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [noDescription] }, 'tools[0] is missing description'],
      [{ tools: [{ ...lookupTool, timeout: 100 }] }, 'tools[0] has an unknown field "timeout"'],
      [{ tools: [{ ...lookupTool, name: 'end_call' }] }, 'tools[0].name "end_call"'],
      [{ tools: { check_order: lookupTool } }, 'tools must be an array'],
      [{ variables: { '1st': 'x' } }, 'variables["1st"] is not a variable name'],
      [{ variables: { now: 'x' } }, 'variables["now"] is reserved'],
      [{ variables: { note: { a: 1 } } }, 'variables["note"] must be a string'],
      [{ variables: { note: 'x'.repeat(2001) } }, 'variables["note"] must be a string of at most 2000'],
      [{ variables: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, i])) }, 'at most 100'],
    ];
    for (const [extra, message] of cases) {
      const res = await start(user, server.name, await signPayload(server, claims(extra), { jti }));
      expect(res.statusCode, JSON.stringify(extra).slice(0, 80)).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_input', message: expect.stringContaining(message) });
    }
    expect(
      (await placed(user, server, { tools: [lookupTool], variables: { note: 'x' } }, jti)).customTools,
    ).toHaveLength(1);
  });
});

describe('POST /api/session/call where webhooks may not reach private addresses (production)', () => {
  let prod: TestApp;
  beforeAll(async () => {
    prod = await createTestApp({
      config: { ...callConfig(), webhooks: { allowPrivate: false, timeoutMs: 2000, pollIntervalMs: 1000 } },
    });
  });
  afterAll(async () => {
    await prod?.close();
  });

  it("refuses a pathway's webhook node and a custom tool at a private address with 400 naming them", async () => {
    const user = await createFundedUser(prod);
    const server = await registerServer(prod, user);
    await insertPhoneNumber(prod, user.id, { provider: 'sandbox' });
    const lookup = {
      name: 'Lookup',
      start: 'lookup',
      nodes: [
        { id: 'lookup', type: 'webhook', url: 'http://127.0.0.1:9/orders', method: 'POST' },
        { id: 'bye', type: 'end', say: 'Goodbye.' },
      ],
      edges: [{ from: 'lookup', to: 'bye' }],
    };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'pathway', pathway: lookup }, 'pathway.nodes[0].url: webhook must point at a public address'],
      [
        {
          tools: [
            {
              type: 'http',
              name: 'check_order',
              description: 'Looks an order up',
              parameters: { type: 'object' },
              url: 'http://10.0.0.7/orders',
            },
          ],
        },
        'tools[0].url: webhook must point at a public address',
      ],
    ];
    for (const [extra, message] of cases) {
      const res = await prod.app.inject({
        method: 'POST',
        url: '/api/session/call',
        headers: bearer(user.token),
        payload: { server: server.name, jwt: await signPayload(server, claims(extra)) },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ code: 'invalid_input', message });
    }
  });
});
