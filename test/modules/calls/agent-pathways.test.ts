import twilioLib from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePathway } from '../../../src/modules/pathways/examples.js';
import type { AssembledCall } from '../../../src/providers/audio/interface.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser, createVerifiedUser } from '../../support/factories.js';
import { callConfig } from './support.js';
import { insertPhoneNumber } from '../../support/phone-numbers.js';

const publicUrl = 'https://api.example.test';
// Twilio's API is not running: inbound calls need only its signature on our webhook.
const twilio = {
  accountSid: `AC${'2'.repeat(32)}`,
  authToken: 'agent-pathways-auth-token',
  from: '+15005550006',
  apiBase: 'http://127.0.0.1:9',
};

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { ...callConfig(), publicUrl, twilio } });
});
afterAll(async () => {
  await t?.close();
});

const storeRecord = async (owner: TestUser, store: 'agents' | 'conversational-pathways', value: unknown) =>
  (await t.services.data.records.create(owner.id, store, Buffer.from(JSON.stringify(value)))).id;

/** The call sealed with a session (the voice runner opens the same column). */
async function assembledOf(sessionId: string): Promise<AssembledCall> {
  const row = await t.database.db
    .selectFrom('call_sessions')
    .select('assembled')
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();
  expect(row.assembled).toBeTruthy();
  return JSON.parse(t.services.platform.secretBox.openText(row.assembled!)) as AssembledCall;
}

const startWebCall = (user: TestUser, body: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/calls/web', headers: bearer(user.token), payload: body });

const lookupTool = {
  type: 'http',
  name: 'check_order',
  description: 'Looks an order up by its number',
  parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  url: 'https://api.example.com/orders/lookup',
  headers: { 'X-Api-Key': 'key_abc123' },
};

describe('POST /api/calls/web with a pathway', () => {
  it("assembles the agent's pathwayId and tools, or the request's pathway instead", async () => {
    const user = await createVerifiedUser(t);
    const pathwayId = await storeRecord(user, 'conversational-pathways', examplePathway);
    const agentId = await storeRecord(user, 'agents', {
      name: 'Ava',
      firstMessage: 'Hi, this is Ava. It is {{now}}.',
      pathwayId,
      tools: [lookupTool],
    });
    const res = await startWebCall(user, { agentId });
    expect(res.statusCode, res.body).toBe(201);
    const call = await assembledOf(res.json().sessionId);
    expect(call.pathway).toEqual({ id: pathwayId, name: 'Order status', document: examplePathway });
    expect(call.systemPrompt).toContain('This call follows the conversation pathway "Order status".');
    expect(call.firstMessage).toBe(
      `Hi, this is Ava. It is ${new Date(t.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z')}.`,
    );
    expect(call.customTools).toEqual([
      expect.objectContaining({ name: 'check_order', method: 'POST', headers: { 'X-Api-Key': expect.any(String) } }),
    ]);
    expect(JSON.stringify(call)).not.toContain('key_abc123');

    // The request's pathway replaces the agent's: here the old list, inline.
    const replaced = await startWebCall(user, { agentId, pathway: { name: 'Intake', steps: ['Ask for their name'] } });
    expect(replaced.statusCode, replaced.body).toBe(201);
    const intake = await assembledOf(replaced.json().sessionId);
    expect(intake.pathway).toMatchObject({ id: null, name: 'Intake' });
    expect(intake.systemPrompt).toContain('Follow this conversation pathway, step by step:\n1. Ask for their name');
  });

  it("refuses another user's pathway (404), an invalid one (422 with every error) and a malformed tool (400 naming it)", async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const theirs = await storeRecord(other, 'conversational-pathways', examplePathway);
    const agent = { name: 'Ava' };

    const foreign = await startWebCall(user, { agent, pathwayId: theirs });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe('not_found');
    const inAgent = await startWebCall(user, { agent: { ...agent, pathwayId: theirs } });
    expect(inAgent.statusCode).toBe(404);

    const invalid = await startWebCall(user, {
      agent: {
        ...agent,
        pathway: { ...examplePathway, start: 'hello', nodes: [...examplePathway.nodes, { id: 'x', type: 'sing' }] },
      },
    });
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json()).toMatchObject({ code: 'invalid_pathway' });
    expect(invalid.json().errors).toEqual(
      expect.arrayContaining([
        { path: '/start', message: expect.any(String) },
        { path: '/nodes/4/type', message: expect.any(String) },
      ]),
    );

    const both = await startWebCall(user, { agent, pathwayId: theirs, pathway: examplePathway });
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toContain('not both');

    const tool = await startWebCall(user, {
      agent: { ...agent, tools: [{ ...lookupTool, url: 'ftp://example.com/x' }] },
    });
    expect(tool.statusCode).toBe(400);
    expect(tool.json()).toEqual({ code: 'invalid_input', message: expect.stringContaining('agent.tools[0].url') });
    // Nothing was set up for the refused calls.
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
  });
});

describe('an inbound call to an agent with a pathway', () => {
  /** POSTs a form to our Twilio voice webhook, signed as Twilio signs it (the official library is the oracle). */
  function ring(numberId: string, params: Record<string, string>) {
    const path = `/api/webhooks/twilio/voice/${numberId}`;
    const signature = twilioLib.getExpectedTwilioSignature(twilio.authToken, publicUrl + path, params);
    return t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      payload: new URLSearchParams(params).toString(),
    });
  }

  /** A Twilio number of the user's whose inbound configuration answers with `agent` (a record of their `agents` store). */
  async function answeringNumber(user: TestUser, agent: unknown): Promise<{ numberId: string; phone: string }> {
    const { id: numberId, phone } = await insertPhoneNumber(t, user.id, { provider: 'twilio', now: t.clock.now() });
    const agentId = await storeRecord(user, 'agents', agent);
    const config = await t.app.inject({
      method: 'PUT',
      url: '/api/inbound-configurations',
      headers: bearer(user.token),
      payload: { name: 'Desk', agent: { id: agentId, type: 'agents' }, source: { type: 'manual' } },
    });
    expect(config.statusCode, config.body).toBe(200);
    // Attaching would point the number at us through Twilio's API, which is not running here: attached in the database.
    await t.database.db
      .updateTable('phone_numbers')
      .set({ inbound_configuration_id: config.json().id })
      .where('id', '=', numberId)
      .execute();
    return { numberId, phone };
  }

  const inboundCall = (sid: string, to: string) => ({
    CallSid: sid,
    AccountSid: twilio.accountSid,
    From: '+14155550177',
    To: to,
    CallStatus: 'ringing',
    Direction: 'inbound',
  });
  const sessionOf = (user: TestUser) =>
    t.database.db.selectFrom('call_sessions').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();

  it("assembles the agent record's pathwayId and tools; {{contact.phone}} is the caller", async () => {
    const user = await createFundedUser(t, 20);
    const pathwayId = await storeRecord(user, 'conversational-pathways', examplePathway);
    const { numberId, phone } = await answeringNumber(user, {
      name: 'Ava',
      firstMessage: 'Hello {{contact.phone}}, this is Ava.',
      pathwayId,
      tools: [lookupTool],
    });
    const answer = await ring(numberId, inboundCall('CApathway1', phone));
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('<Stream');
    const call = await assembledOf((await sessionOf(user)).id);
    expect(call.pathway).toEqual({ id: pathwayId, name: 'Order status', document: examplePathway });
    expect(call.firstMessage).toBe('Hello +14155550177, this is Ava.');
    expect(call.customTools?.map((tool) => tool.name)).toEqual(['check_order']);
  });

  it('refuses the call as agent_unreadable when its pathway cannot be read or is not valid', async () => {
    for (const [sid, agent] of [
      ['CApathway2', { name: 'Ava', pathwayId: '01890a5d-ac96-774b-bcce-b302099a8057' }],
      ['CApathway3', { name: 'Ava', pathway: { ...examplePathway, start: 'nowhere' } }],
      ['CApathway4', { name: 'Ava', tools: [{ ...lookupTool, parameters: { type: 'string' } }] }],
    ] as const) {
      const user = await createFundedUser(t, 20);
      const { numberId, phone } = await answeringNumber(user, agent);
      const answer = await ring(numberId, inboundCall(sid, phone));
      expect(answer.statusCode).toBe(200);
      expect(answer.body, sid).toContain('<Say');
      expect(answer.body).toContain('<Hangup/>');
      expect(await sessionOf(user)).toMatchObject({ status: 'failed', outcome: 'refused', reason: 'agent_unreadable' });
    }
  });
});
