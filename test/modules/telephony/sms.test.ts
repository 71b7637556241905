// SMS (spec 4.13) through the sandbox provider: the message lands in the
// outbox and the sandbox's signed `sent`/`delivered` callbacks come back over
// HTTP to the status route. Also forgery and duplicates on that route.
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRateLimits } from '../../../src/config.js';
import { sandboxTwilioToken } from '../../../src/providers/index.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import { relaxedIpLimits } from '../../support/app.js';
import { eventPayloadErrors } from '../../support/event-schemas.js';
import { type TelephonyTestApp, buyNumber, createTelephonyApp, eventually, json } from './helpers.js';

let t: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp({
    config: { rateLimits: { ...relaxedIpLimits, smsSendPerUser: { limit: 5, windowMs: 60_000 } } },
  });
});
/** A verified user with $10 of prepaid credit in the in-memory billing account (SMS cost money). */
const fundedUser = async () => {
  const user = await createVerifiedUser(t);
  t.billing.fund(user.id, 1000);
  return user;
};

afterAll(() => t.close());

const send = (user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  json(t, 'POST', '/api/sms/messages', user, body, headers);
const message = (user: TestUser, id: string) => json(t, 'GET', `/api/sms/messages/${id}`, user);
/** The user's sms_status payloads, each checked against the schema the document publishes (SmsStatusEvent). */
const smsEvents = async (userId: string) => {
  const payloads = (
    await t.database.db
      .selectFrom('events')
      .selectAll()
      .where('user_id', '=', userId)
      .where('type', '=', 'sms_status')
      .orderBy('id')
      .execute()
  ).map((e) => JSON.parse(String(e.payload)));
  for (const payload of payloads) expect(eventPayloadErrors('sms_status', payload)).toEqual([]);
  return payloads;
};

/** Posts a status callback to the service, signed with `token` (the sandbox's by default) by the twilio package. */
async function callback(
  id: string,
  params: Record<string, string>,
  token = sandboxTwilioToken(t.secrets.masterKey),
  signature?: string,
) {
  const url = `${t.publicUrl}/api/webhooks/twilio/sms/${id}`;
  return t.app.inject({
    method: 'POST',
    url: `/api/webhooks/twilio/sms/${id}`,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? twilio.getExpectedTwilioSignature(token, url, params),
    },
    payload: new URLSearchParams(params).toString(),
  });
}

describe('POST /api/sms/messages (sandbox)', () => {
  it('sends from the caller’s number, lands in the outbox, and reaches delivered through signed callbacks', async () => {
    const user = await fundedUser();
    const numberId = await buyNumber(t, user);
    const res = await send(user, { phoneNumberId: numberId, to: '+14155550123', body: 'Your table is ready' });
    expect(res.statusCode).toBe(200);
    const sent = res.json();
    expect(sent).toMatchObject({
      id: expect.any(String),
      phoneNumberId: numberId,
      to: '+14155550123',
      body: 'Your table is ready',
      provider: 'sandbox',
      providerSid: expect.stringMatching(/^SM/),
    });
    expect(sent.statuses[0]).toMatchObject({ status: 'queued' });

    const [outboxed] = await t.services.platform.outbox.list('+14155550123');
    expect(outboxed).toMatchObject({
      channel: 'sms',
      body: 'Your table is ready',
      data: { messageSid: sent.providerSid },
    });

    const done = await eventually(
      async () => (await message(user, sent.id)).json(),
      (m) => m.status === 'delivered',
      'delivered',
    );
    expect(done.statuses.map((s: { status: string }) => s.status)).toEqual(['queued', 'sent', 'delivered']);
    const events = await smsEvents(user.id);
    // One event per status; the create answer's may be recorded after a fast callback's.
    expect(events.map((e) => e.status).sort()).toEqual(['delivered', 'queued', 'sent']);
    expect(events.find((e) => e.status === 'delivered')).toMatchObject({
      message_id: sent.id,
      phone_number_id: numberId,
      to: '+14155550123',
      status: 'delivered',
      error_code: null,
    });
  });

  it('refuses another user’s number (404), a non-E.164 recipient and bodies out of bounds (400)', async () => {
    const owner = await fundedUser();
    const other = await fundedUser();
    const numberId = await buyNumber(t, owner);
    expect((await send(other, { phoneNumberId: numberId, to: '+14155550123', body: 'hi' })).statusCode).toBe(404);
    for (const body of [
      { phoneNumberId: numberId, to: '4155550123', body: 'hi' },
      { phoneNumberId: numberId, to: '+0123456789', body: 'hi' },
      { phoneNumberId: numberId, to: '+14155550123', body: '' },
      { phoneNumberId: numberId, to: '+14155550123', body: 'x'.repeat(1601) },
    ]) {
      expect((await send(owner, body)).statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    expect(
      (await send(owner, { phoneNumberId: numberId, to: '+14155550123', body: 'x'.repeat(1600) })).statusCode,
    ).toBe(200);
  });

  it('lists the caller’s messages newest first, by number, in pages', async () => {
    const user = await fundedUser();
    const other = await fundedUser();
    const first = await buyNumber(t, user);
    const second = await buyNumber(t, user);
    const ids: string[] = [];
    for (const [numberId, body] of [
      [first, 'a'],
      [second, 'b'],
      [first, 'c'],
    ])
      ids.push((await send(user, { phoneNumberId: numberId, to: '+14155550128', body })).json().id);
    const all = (await json(t, 'GET', '/api/sms/messages', user)).json();
    expect(all.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
    expect(all[0].statuses.length).toBeGreaterThan(0);
    expect(
      (await json(t, 'GET', `/api/sms/messages?phoneNumberId=${first}`, user))
        .json()
        .map((m: { body: string }) => m.body),
    ).toEqual(['c', 'a']);
    expect(
      (await json(t, 'GET', `/api/sms/messages?limit=1&before=${ids[2]}`, user))
        .json()
        .map((m: { id: string }) => m.id),
    ).toEqual([ids[1]]);
    expect((await json(t, 'GET', '/api/sms/messages', other)).json()).toEqual([]);
  });

  it("another user's message is 404", async () => {
    const owner = await fundedUser();
    const other = await fundedUser();
    const numberId = await buyNumber(t, owner);
    const { id } = (await send(owner, { phoneNumberId: numberId, to: '+14155550124', body: 'hi' })).json();
    expect((await message(other, id)).statusCode).toBe(404);
    expect((await message(owner, id)).statusCode).toBe(200);
  });

  it('with an Idempotency-Key a retry sends nothing more', async () => {
    const user = await fundedUser();
    const numberId = await buyNumber(t, user);
    const headers = { 'idempotency-key': `sms-${user.id}` };
    const to = '+14155550125';
    const first = await send(user, { phoneNumberId: numberId, to, body: 'once' }, headers);
    const retry = await send(user, { phoneNumberId: numberId, to, body: 'once' }, headers);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json().id).toBe(first.json().id);
    expect(await t.services.platform.outbox.list(to)).toHaveLength(1);
  });

  it('rate-limits per user with 429', async () => {
    const user = await fundedUser();
    const numberId = await buyNumber(t, user);
    const codes: number[] = [];
    for (let i = 0; i < 6; i++)
      codes.push((await send(user, { phoneNumberId: numberId, to: '+14155550126', body: `n${i}` })).statusCode);
    expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
    expect(defaultRateLimits.smsSendPerUser.limit).toBe(60);
  });
});

describe('POST /api/webhooks/twilio/sms/{id}', () => {
  async function sentMessage() {
    const user = await fundedUser();
    const numberId = await buyNumber(t, user);
    const m = (await send(user, { phoneNumberId: numberId, to: '+14155550127', body: 'hello' })).json();
    await eventually(
      async () => (await message(user, m.id)).json(),
      (v) => v.status === 'delivered',
      'delivered',
    );
    return { user, m };
  }

  it('a bad or missing signature is 400 and changes nothing', async () => {
    const { user, m } = await sentMessage();
    const before = (await message(user, m.id)).json();
    const eventsBefore = await smsEvents(user.id);
    const params = { MessageSid: m.providerSid, MessageStatus: 'failed', ErrorCode: '30003' };
    for (const res of [
      await callback(m.id, params, 'not-the-token'),
      await callback(m.id, params, undefined, 'AAAA'),
      await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/twilio/sms/${m.id}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(params).toString(),
      }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_signature');
    }
    // A signature made for another message's URL does not carry over.
    const url = `${t.publicUrl}/api/webhooks/twilio/sms/other`;
    expect(
      (
        await callback(
          m.id,
          params,
          undefined,
          twilio.getExpectedTwilioSignature(sandboxTwilioToken(t.secrets.masterKey), url, params),
        )
      ).statusCode,
    ).toBe(400);
    expect((await message(user, m.id)).json()).toEqual(before);
    expect(await smsEvents(user.id)).toEqual(eventsBefore);
  });

  it('a repeated callback is recorded once; a later lower status does not move the status back', async () => {
    const { user, m } = await sentMessage();
    const params = { MessageSid: m.providerSid, MessageStatus: 'read' };
    const answers = await Promise.all([callback(m.id, params), callback(m.id, params), callback(m.id, params)]);
    expect(answers.map((a) => a.statusCode)).toEqual([204, 204, 204]);
    expect((await callback(m.id, { MessageSid: m.providerSid, MessageStatus: 'sent' })).statusCode).toBe(204);
    const after = (await message(user, m.id)).json();
    expect(after.status).toBe('read');
    expect(after.statuses.map((s: { status: string }) => s.status)).toEqual(['queued', 'sent', 'delivered', 'read']);
    expect((await smsEvents(user.id)).map((e) => e.status).sort()).toEqual(['delivered', 'queued', 'read', 'sent']);
  });

  it('unknown status or mismatched MessageSid is 400; an unknown message is 404 (after the signature)', async () => {
    const { m } = await sentMessage();
    expect((await callback(m.id, { MessageSid: m.providerSid, MessageStatus: 'teleported' })).statusCode).toBe(400);
    expect((await callback(m.id, { MessageSid: 'SMother', MessageStatus: 'failed' })).statusCode).toBe(400);
    expect((await callback('0193-missing', { MessageSid: 'SMx', MessageStatus: 'sent' })).statusCode).toBe(404);
  });
});
