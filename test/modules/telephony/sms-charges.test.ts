// What an SMS costs (DESIGN "Money for calls and SMS") against billing's real
// ledger: SMS_PRICE_USD per segment rounded up to a cent, held at send (402
// without balance: nothing sent), kept on sent/delivered, returned when it
// fails first, once under repeated and concurrent callbacks; the sandbox path
// included. Segment counting itself: test/lib/sms-segments.test.ts.
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxTwilioToken } from '../../../src/providers/index.js';
import { type TestUser, createFundedUser } from '../../support/factories.js';
import { type TelephonyTestApp, buyNumber, createTelephonyApp, eventually, json } from './helpers.js';

// Callbacks of the sandbox come late (a minute), so the tests post each status themselves; `live` delivers them at once.
let t: TelephonyTestApp;
let live: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp(
    { env: { SMS_PRICE_USD: '0.0079' }, config: { sandboxCallbackDelayMs: 60_000 } },
    { realBilling: true },
  );
  live = await createTelephonyApp({ env: { SMS_PRICE_USD: '0.0079' } }, { realBilling: true });
});
afterAll(async () => {
  await t.close();
  await live.close();
});

const ledger = async (app: TelephonyTestApp, userId: string) =>
  (
    await app.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', userId).orderBy('id').execute()
  ).map((r) => [r.reason, Number(r.cents)]);
const balance = (app: TelephonyTestApp, userId: string) => app.services.billing.account.balanceCents(userId);

async function callback(id: string, params: Record<string, string>) {
  const url = `${t.publicUrl}/api/webhooks/twilio/sms/${id}`;
  return t.app.inject({
    method: 'POST',
    url: `/api/webhooks/twilio/sms/${id}`,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(sandboxTwilioToken(t.secrets.masterKey), url, params),
    },
    payload: new URLSearchParams(params).toString(),
  });
}

/** A funded user with a number (a card on file buys it: the in-memory account is not used here, billing's sandbox checkout is). */
async function sender(app: TelephonyTestApp, usd = 5): Promise<{ user: TestUser; numberId: string }> {
  const user = await createFundedUser(app, usd);
  // The top-up's checkout saved a card, so the number's subscription can start.
  const numberId = await buyNumber(app, user);
  return { user, numberId };
}

describe('SMS charges', () => {
  it('without balance: 402 insufficient_funds, nothing sent, no message kept, nothing in the ledger', async () => {
    const { user: owner, numberId } = await sender(t);
    // Spend the balance down to nothing through the ledger's own hold, as another purchase would.
    await t.services.billing.account.reserve(owner.id, await balance(t, owner.id), `spent:${owner.id}`);
    const outbox = (await json(t, 'GET', '/api/sandbox/outbox', null)).json().length;
    const res = await json(t, 'POST', '/api/sms/messages', owner, {
      phoneNumberId: numberId,
      to: '+14155550123',
      body: 'hello',
    });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe('insufficient_funds');
    expect((await json(t, 'GET', '/api/sandbox/outbox', null)).json().length).toBe(outbox);
    expect((await json(t, 'GET', '/api/sms/messages', owner)).json()).toEqual([]);
    expect((await ledger(t, owner.id)).filter(([reason]) => reason !== 'topup' && reason !== 'hold')).toEqual([]);
  });

  it('holds the price per segment at send and keeps it on delivered, once, however the callbacks repeat or race', async () => {
    const { user, numberId } = await sender(t);
    // 200 GSM-7 characters: 2 segments × $0.0079 = $0.0158 → 2 cents.
    const res = await json(t, 'POST', '/api/sms/messages', user, {
      phoneNumberId: numberId,
      to: '+14155550123',
      body: 'a'.repeat(200),
    });
    expect(res.statusCode, res.body).toBe(200);
    const sent = res.json();
    expect(sent).toMatchObject({ segments: 2, price: { amount: 0.02, currency: 'usd' } });
    expect(await balance(t, user.id)).toBe(498);
    const params = (status: string) => ({ MessageSid: sent.providerSid, MessageStatus: status });
    const answers = await Promise.all(
      [...Array(5).fill('delivered'), ...Array(5).fill('sent')].map((s) => callback(sent.id, params(s))),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(204));
    // A failure reported afterwards changes nothing: the message was charged.
    expect((await callback(sent.id, params('undelivered'))).statusCode).toBe(204);
    const holds = (await ledger(t, user.id)).filter(([reason]) => reason !== 'topup');
    expect(holds).toEqual([['hold', -2]]);
    expect(await balance(t, user.id)).toBe(498);
    const row = await t.database.db
      .selectFrom('sms_messages')
      .selectAll()
      .where('id', '=', sent.id)
      .executeTakeFirstOrThrow();
    expect(row.charge_state).toBe('charged');
    const reservation = await t.database.db
      .selectFrom('credit_reservations')
      .selectAll()
      .where('ref', '=', `sms:${sent.id}`)
      .executeTakeFirstOrThrow();
    expect(reservation).toMatchObject({ state: 'settled' });
    expect(Number(reservation.used_cents)).toBe(2);
  });

  it('returns the hold when the message fails first (UCS-2: 70 characters a segment)', async () => {
    const { user, numberId } = await sender(t);
    // 71 UCS-2 characters: split into 67 + 4 → 2 segments → 2 cents.
    const res = await json(t, 'POST', '/api/sms/messages', user, {
      phoneNumberId: numberId,
      to: '+14155550123',
      body: `Привет ${'ж'.repeat(64)}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    const sent = res.json();
    expect(sent.segments).toBe(2);
    expect(await balance(t, user.id)).toBe(498);
    const answers = await Promise.all(
      [...Array(4).fill('failed'), ...Array(4).fill('undelivered')].map((s) =>
        callback(sent.id, { MessageSid: sent.providerSid, MessageStatus: s, ErrorCode: '30003' }),
      ),
    );
    expect(answers.every((a) => a.statusCode === 204)).toBe(true);
    expect((await callback(sent.id, { MessageSid: sent.providerSid, MessageStatus: 'delivered' })).statusCode).toBe(
      204,
    );
    expect((await ledger(t, user.id)).filter(([reason]) => reason !== 'topup')).toEqual([
      ['hold', -2],
      ['refund', 2],
    ]);
    expect(await balance(t, user.id)).toBe(500);
  });

  it('an Idempotency-Key retry holds and charges nothing more', async () => {
    const { user, numberId } = await sender(t);
    const body = { phoneNumberId: numberId, to: '+14155550123', body: 'once' };
    const first = await json(t, 'POST', '/api/sms/messages', user, body, { 'idempotency-key': `sms-${user.id}` });
    const again = await json(t, 'POST', '/api/sms/messages', user, body, { 'idempotency-key': `sms-${user.id}` });
    expect(again.json().id).toBe(first.json().id);
    expect((await ledger(t, user.id)).filter(([reason]) => reason === 'hold')).toEqual([['hold', -1]]);
  });

  it('the sandbox provider path: its own sent and delivered callbacks settle the hold', async () => {
    const { user, numberId } = await sender(live);
    const res = await json(live, 'POST', '/api/sms/messages', user, {
      phoneNumberId: numberId,
      to: '+14155550123',
      body: 'Your table is ready',
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().id;
    await eventually(
      async () =>
        (
          await live.database.db
            .selectFrom('sms_messages')
            .select('charge_state')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).charge_state,
      (state) => state === 'charged',
      'sandbox callbacks settled the SMS',
    );
    expect(await balance(live, user.id)).toBe(499);
    expect((await ledger(live, user.id)).filter(([reason]) => reason !== 'topup')).toEqual([['hold', -1]]);
  });
});
