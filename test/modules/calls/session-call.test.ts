// POST /api/session/call over a real socket: a signed payload starts a sandbox
// call that runs to completed, with call_status events on the session's
// stream, verified webhook deliveries, usage once in the billing state and an
// encrypted record; forged, expired, replayed and foreign references refused.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { parseCallPayload } from '../../../src/modules/calls/session-service.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser, createVerifiedUser } from '../../support/factories.js';
import { type RegisteredServer, encryptToService, registerServer, signPayload } from '../../support/signed-payloads.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { eventually, stream } from '../events/support.js';
import { callConfig, callRecords } from './support.js';

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
  const id = newId(t.clock.now());
  const now = t.clock.now();
  await t.database.db.insertInto('phone_numbers').values({
    id, user_id: user.id, provider: 'sandbox', provider_sid: `PN${randomUUID().replace(/-/g, '')}`, phone_number: phone, name: phone, description: null,
    type: voice ? 'both' : 'outbound', number_type: 'local', country: 'US', capabilities: JSON.stringify({ voice, sms: true, mms: false }),
    monthly_cents: 115, currency: 'usd', address_sid: null, subscription_id: null, inbound_configuration_id: null, status: 'active', created_at: now, updated_at: now,
  }).execute();
  return id;
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
  t.app.inject({ method: 'POST', url: '/api/session/call', headers: { ...bearer(user.token), ...headers }, payload: { server, jwt } });

async function setup(): Promise<{ user: TestUser; server: RegisteredServer; numberId: string }> {
  const user = await createFundedUser(t);
  const server = await registerServer(t, user);
  const numberId = await addNumber(user, `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`);
  return { user, server, numberId };
}

describe('POST /api/session/call', () => {
  it('runs a signed, encrypted call to completed: events on the session stream, verified webhooks, usage once, an encrypted record', async () => {
    const { user, server, numberId } = await setup();
    const secret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/secret', headers: bearer(user.token) })).json().secret;
    const kb = await t.app.inject({ method: 'PUT', url: '/api/knowledge-bases', headers: bearer(user.token), payload: { name: 'Clinic' } });
    expect(kb.statusCode, kb.body).toBe(200);
    const serviceKey = (await t.app.inject({ method: 'GET', url: '/api/server', headers: bearer(user.token) })).json();
    const jws = await signPayload(server, claims({ knowledgeBase: { id: kb.json().id }, phoneNumberId: numberId, webhook: `${receiver.url}/hook?user=${user.id}` }));
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
    expect(await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);

    const sse = await stream(t, user.token, `call_status?session_id=${sessionId}`, { headers: { 'last-event-id': '0' } });
    const events = await sse.waitForEvents(4, 20_000);
    sse.close();
    const payloads = events.map((e) => JSON.parse(e.data));
    expect(payloads.map((p) => p.status)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
    expect(payloads[3].transcript[0]).toEqual({ role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' });

    await receiver.waitFor((all) => all.filter((r) => r.path.includes(user.id)).length >= 4);
    const hooks = receiver.received.filter((r) => r.path.includes(user.id));
    expect(hooks).toHaveLength(4);
    for (const h of hooks) expect((new Webhook(secret).verify(h.body, h.headers as Record<string, string>) as { data: { session_id: string } }).data.session_id).toBe(sessionId);

    const session = () => t.database.db.selectFrom('call_sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow();
    await eventually(async () => (await session()).finished_at !== null, 5000, 'call accounted for');
    const summary = JSON.parse((await session()).summary);
    expect(summary.voice).toEqual({ provider: 'local', voiceId: expect.any(String) });
    // Usage moved once: one outbound call and its seconds in this period's billing state.
    const state = (await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })).json();
    expect(state.usageRaw).toMatchObject({ calls_outbound: 1, seconds_outbound: payloads[3].duration_seconds });
    const records = await callRecords(t, user);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ session_id: sessionId, status: 'completed', to: '+14155550123', contact: { name: 'Grace' } });
  }, 30_000);

  it('assembles the system prompt, persona voice and knowledge tool', async () => {
    const { user } = await setup();
    const kb = (await t.app.inject({ method: 'PUT', url: '/api/knowledge-bases', headers: bearer(user.token), payload: { name: 'Clinic' } })).json();
    const call = await t.services.callSessions.sessions.assemble(user.id, parseCallPayload(claims({ type: 'pathway', pathway: { name: 'Confirm', steps: ['Greet', 'Confirm the time'] }, knowledgeBase: { id: kb.id } })));
    expect(call.systemPrompt).toContain('1. Greet');
    expect(call.systemPrompt).toContain('appointment: Tuesday 10:00');
    expect(call.tools.map((x) => x.name)).toEqual(['search_knowledge']);
    expect(call.tools[0]!.parameters).toMatchObject({ type: 'object', required: ['query'] });
  });

  it('refuses forgery, an unknown server, expiry, replay, foreign references and callers without a voice number', async () => {
    const { user, server } = await setup();
    const other = await setup();
    const otherKb = (await t.app.inject({ method: 'PUT', url: '/api/knowledge-bases', headers: bearer(other.user.token), payload: { name: 'Theirs' } })).json();

    const forged = await signPayload(other.server, claims());
    expect((await start(user, server.name, forged)).json().code).toBe('invalid_token');
    expect((await start(user, 'nope', await signPayload(server, claims()))).statusCode).toBe(404);
    expect((await start(user, server.name, await signPayload(server, claims(), { now: Date.now() - 3600_000 }))).json().code).toBe('invalid_token');
    expect((await start(user, server.name, await signPayload(server, { ...claims(), use: 'persona-preview' }))).json().code).toBe('invalid_token');
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
    expect((await start(user, server.name, await signPayload(server, claims({ type: 'pathway' }), { jti }))).json().code).toBe('invalid_input');
    expect((await start(user, server.name, await signPayload(server, claims(), { jti }))).statusCode).toBe(204);

    for (const extra of [{ phoneNumberId: other.numberId }, { knowledgeBase: { id: otherKb.id } }, { integrations: ['int_not_mine'] }]) {
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
    expect(await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute()).toEqual([]);

    const premium = await start(user, server.name, await signPayload(server, claims({ contact: { name: 'Grace', phone: '+18765550123' } })));
    expect(premium.statusCode).toBe(400);
    expect(premium.json().code).toBe('unsupported_destination');

    // Funded, with as many calls open as CALL_CONCURRENCY_PER_USER allows (5 by default): the next is 429.
    const funded = await setup();
    for (let i = 0; i < t.config.billing.callConcurrencyPerUser; i++) {
      expect(await t.services.calls.charges!.authorizeCall(funded.user.id, { ref: `busy-${funded.user.id}-${i}`, direction: 'outbound', number: '+14155550123', maxDurationSeconds: 60 })).toMatchObject({ ok: true });
    }
    const busy = await start(funded.user, funded.server.name, await signPayload(funded.server, claims()));
    expect(busy.statusCode).toBe(429);
    expect(busy.json().code).toBe('concurrency_limit');
  });
});
