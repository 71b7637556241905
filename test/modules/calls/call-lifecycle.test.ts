// How call sessions end when things go wrong around them (issue 46): an
// inbound webhook posted again (a retry or a replay) opens no second session
// and no second hold; a session whose media stream never connects ends soon
// after its token expired and gives its hold back; a call whose instance died
// is charged what the carrier said it lasted, or up to the instance's last
// heartbeat. The test plays Twilio: webhooks signed by the official library.
import { randomUUID } from 'node:crypto';
import twilioLib from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { callConfig } from './support.js';
import { insertPhoneNumber } from '../../support/phone-numbers.js';

const publicUrl = 'https://api.example.test';
const twilio = {
  accountSid: `AC${'1'.repeat(32)}`,
  authToken: 'lifecycle-auth-token',
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

/** POSTs a form to one of our Twilio webhooks, signed as Twilio signs it (the official library is the oracle). */
function postSigned(path: string, params: Record<string, string>) {
  const signature = twilioLib.getExpectedTwilioSignature(twilio.authToken, publicUrl + path, params);
  return t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    payload: new URLSearchParams(params).toString(),
  });
}

/** A Twilio number of the user's, attached to an inbound configuration whose agent is a record of their `agents` store. */
async function answeringNumber(user: TestUser): Promise<{ numberId: string; phone: string }> {
  const { id: numberId, phone } = await insertPhoneNumber(t, user.id, { provider: 'twilio', now: t.clock.now() });
  const agent = await t.services.data.records.create(user.id, 'agents', Buffer.from(JSON.stringify({ name: 'Ava' })));
  const config = await t.app.inject({
    method: 'PUT',
    url: '/api/inbound-configurations',
    headers: bearer(user.token),
    payload: { name: 'Desk', agent: { id: agent.id, type: 'agents' }, source: { type: 'manual' } },
  });
  expect(config.statusCode, config.body).toBe(200);
  // Attaching points the number's voice URL at us through Twilio's API, which is not running here: attach in the database.
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
const sessionsOf = (user: TestUser) =>
  t.database.db.selectFrom('call_sessions').selectAll().where('user_id', '=', user.id).execute();
const chargesOf = (user: TestUser) =>
  t.database.db.selectFrom('call_charges').selectAll().where('user_id', '=', user.id).execute();
const view = async (user: TestUser, id: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/calls/${id}`, headers: bearer(user.token) })).json();

describe('an inbound webhook posted again', () => {
  it('opens one session and one hold however often and however concurrently it comes, and answers each time', async () => {
    const user = await createFundedUser(t, 20);
    const { numberId, phone } = await answeringNumber(user);
    const path = `/api/webhooks/twilio/voice/${numberId}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => postSigned(path, inboundCall('CAdup1', phone))));
    for (const answer of answers) {
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toMatch(
        /<Connect><Stream url="wss:\/\/api\.example\.test\/api\/media\/twilio"><Parameter name="token" value="[^"]+"\/>/,
      );
    }
    expect(await sessionsOf(user)).toHaveLength(1);
    expect(await chargesOf(user)).toHaveLength(1);
    const holds = await t.database.db
      .selectFrom('credit_ledger')
      .select(['ref', 'cents'])
      .where('user_id', '=', user.id)
      .where('ref', 'like', 'hold:%')
      .execute();
    expect(holds).toHaveLength(1);
    // Replayed later: still the one session.
    expect((await postSigned(path, inboundCall('CAdup1', phone))).statusCode).toBe(200);
    expect(await sessionsOf(user)).toHaveLength(1);
    // Another call is another session.
    expect((await postSigned(path, inboundCall('CAdup2', phone))).body).toContain('<Stream');
    expect(await sessionsOf(user)).toHaveLength(2);
  });

  it('answers a refused call the same way again, without a second session', async () => {
    const user = await createFundedUser(t, 20);
    const { numberId, phone } = await answeringNumber(user);
    await t.database.db
      .updateTable('phone_numbers')
      .set({ inbound_configuration_id: null })
      .where('id', '=', numberId)
      .execute();
    const path = `/api/webhooks/twilio/voice/${numberId}`;
    const [first, second] = await Promise.all([
      postSigned(path, inboundCall('CArefused1', phone)),
      postSigned(path, inboundCall('CArefused1', phone)),
    ]);
    expect(first.body).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    expect(second.body).toBe(first.body);
    expect(await sessionsOf(user)).toHaveLength(1);
  });
});

describe('a session whose media stream never connects', () => {
  it('ends within a minute of its token expiring, gives its hold back and frees its slot', async () => {
    const user = await createFundedUser(t, 20);
    const balance = await t.services.billing.account.balanceCents(user.id);
    const { numberId, phone } = await answeringNumber(user);
    expect((await postSigned(`/api/webhooks/twilio/voice/${numberId}`, inboundCall('CAnever', phone))).body).toContain(
      '<Stream',
    );
    const [session] = await sessionsOf(user);
    expect(await t.services.billing.account.balanceCents(user.id)).toBeLessThan(balance);
    // Still inside its token's minute: left alone.
    t.clock.advance(30_000);
    expect(await t.services.voice.endUnconnected()).toBe(0);
    t.clock.advance(45_000);
    // (The sessions the tests above left waiting end too.)
    expect(await t.services.voice.endUnconnected()).toBeGreaterThanOrEqual(1);
    expect(await view(user, session!.id)).toMatchObject({
      status: 'failed',
      outcome: 'provider_error',
      reason: 'media_not_connected',
    });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(balance);
    const [charge] = await chargesOf(user);
    expect(charge).toMatchObject({ state: 'settled', charged_cents: 0 });
    // Once: a second look (another instance's housekeeping) finds nothing.
    expect(await t.services.voice.endUnconnected()).toBe(0);
  });
});

describe('a call whose instance died', () => {
  /** An outbound call authorized and carried by an instance that has gone quiet since `heartbeatAgoMs`, answered `talkedMs` before that. */
  async function carriedCall(
    user: TestUser,
    callSid: string,
    heartbeatAgoMs: number,
    talkedMs: number,
  ): Promise<string> {
    const now = t.clock.now();
    const id = newId(now);
    const authorized = await t.services.calls.charges!.authorizeCall(user.id, {
      ref: id,
      direction: 'outbound',
      number: '+442071234567',
      maxDurationSeconds: 600,
    });
    expect(authorized.ok).toBe(true);
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        direction: 'outbound',
        status: 'in_progress',
        webhook_url: null,
        summary: JSON.stringify({ to: '+442071234567', from: '+14155550100' }),
        provider_call_id: callSid,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: now - heartbeatAgoMs - talkedMs - 5000,
        updated_at: now,
        answered_at: now - heartbeatAgoMs - talkedMs,
        media_instance: 'instance_killed',
        media_heartbeat_at: now - heartbeatAgoMs,
      })
      .execute();
    return id;
  }

  it("is charged the carrier's duration when its signed completed came while the stream still looked carried", async () => {
    const user = await createFundedUser(t, 20);
    const id = await carriedCall(user, 'CAkilled1', 2000, 10_000);
    const completed = await postSigned(`/api/webhooks/twilio/call/${id}`, {
      CallSid: 'CAkilled1',
      AccountSid: twilio.accountSid,
      CallStatus: 'completed',
      CallDuration: '95',
    });
    expect(completed.statusCode).toBe(204);
    // The instance looked alive: the carrier's word waits for it.
    expect((await view(user, id)).status).toBe('in_progress');
    t.clock.advance(46_000);
    expect(await t.services.voice.failOrphaned()).toBeGreaterThanOrEqual(1);
    expect(await view(user, id)).toMatchObject({ status: 'failed', outcome: 'instance_stopped', durationSeconds: 95 });
    const charge = (await chargesOf(user)).find((c) => c.ref === id)!;
    expect(charge).toMatchObject({ state: 'settled', seconds: 95 });
    // The UK rate per started minute, two minutes.
    expect(Number(charge.charged_cents)).toBe(Math.ceil((2 * Number(charge.rate)) / 100));
  });

  it('is charged up to its last heartbeat when the carrier said nothing', async () => {
    const user = await createFundedUser(t, 20);
    const id = await carriedCall(user, 'CAkilled2', 20_000, 30_000);
    t.clock.advance(26_000);
    expect(await t.services.voice.failOrphaned()).toBeGreaterThanOrEqual(1);
    expect(await view(user, id)).toMatchObject({ status: 'failed', outcome: 'instance_stopped', durationSeconds: 30 });
    expect((await chargesOf(user)).find((c) => c.ref === id)).toMatchObject({ state: 'settled', seconds: 30 });
  });
});

describe('a call ringing in the sandbox carrier of an instance that stopped', () => {
  async function ringingCall(user: TestUser, holder: string, heartbeatAgoMs: number): Promise<string> {
    const now = t.clock.now();
    const id = newId(now);
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        direction: 'outbound',
        status: 'ringing',
        webhook_url: null,
        summary: JSON.stringify({ to: '+14155550123', from: '+15005550006' }),
        provider_call_id: `CA${randomUUID().replace(/-/g, '')}`,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: now - heartbeatAgoMs,
        updated_at: now - heartbeatAgoMs,
        carrier_instance: holder,
        media_heartbeat_at: now - heartbeatAgoMs,
      })
      .execute();
    return id;
  }

  it('ends failed, outcome instance_stopped, once its holder has been silent 45 s; a holder that beats keeps it', async () => {
    const user = await createFundedUser(t);
    const gone = await ringingCall(user, 'instance_gone_ringing', 46_000);
    const alive = await ringingCall(user, 'instance_alive_ringing', 40_000);
    // The live holder's heartbeat confirms the calls it holds that have not connected.
    await t.services.voice.store.heartbeat(
      'instance_alive_ringing',
      [],
      ['completed', 'failed', 'busy', 'no_answer', 'canceled'],
      t.clock.now(),
    );
    t.clock.advance(10_000);
    await t.services.voice.failOrphaned();
    expect(await view(user, gone)).toMatchObject({
      status: 'failed',
      outcome: 'instance_stopped',
      reason: 'instance_stopped',
    });
    expect((await view(user, alive)).status).toBe('ringing');
  });

  it('ends at once when this instance is the only one there can be (a SQLite server at start), however fresh the other heartbeat', async () => {
    const user = await createFundedUser(t);
    const killed = await ringingCall(user, 'instance_killed_just_now', 1000);
    await t.services.voice.failOrphaned();
    expect((await view(user, killed)).status).toBe('ringing');
    await t.services.voice.failOrphaned({ exclusive: true });
    expect(await view(user, killed)).toMatchObject({ status: 'failed', outcome: 'instance_stopped' });
  });
});
