// What happens at Stripe reaches the product, each exactly once: a refunded or
// disputed top-up takes the credit back (the balance may go negative, and then
// holds are refused); an unpaid or ended subscription suspends the phone number
// it pays for, and a paid one restores it. Events arrive signed as Stripe signs
// them (the official SDK's generateTestHeaderString is the oracle), replayed,
// concurrently, to two instances, and forged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { type SignedWebhook, StripeFake } from '../../support/stripe-fake.js';
import { type TelephonyTestApp, createTelephonyApp, json, search } from '../telephony/helpers.js';

let fake: StripeFake;
let t: TelephonyTestApp;
let t2: TestApp;
beforeAll(async () => {
  fake = await StripeFake.start();
  t = await createTelephonyApp({ env: fake.env() }, { realBilling: true });
  t2 = await createTestApp({ env: { ...fake.env(), PUBLIC_URL: t.publicUrl }, shareDatabaseWith: t, clock: t.clock });
});
afterAll(async () => {
  await t2.close();
  await t.close();
  await fake.close();
});

const deliver = (w: SignedWebhook, app = t.app) =>
  app.inject({ method: 'POST', url: '/api/webhooks/stripe', payload: w.body, headers: w.headers });
const outcome = async (w: SignedWebhook, app = t.app) => (await deliver(w, app)).json().outcome;
const balance = (user: TestUser) => t.services.billing.account.balanceCents(user.id);
const sessionOf = (url: string) => fake.get(url.split('/').pop()!);

/** Every instance gets the same event at once (on SQLite the two share one file, so they take turns). */
async function deliverConcurrently(w: SignedWebhook, times = 3): Promise<string[]> {
  const answers = await Promise.all(Array.from({ length: times }, (_, i) => deliver(w, i % 2 ? t2.app : t.app)));
  expect(answers.map((a) => a.statusCode)).toEqual(answers.map(() => 200));
  return answers.map((a) => a.json().outcome).sort();
}

async function paidTopUp(user: TestUser, usd: number) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/credits/add?amount=${usd}`,
    headers: bearer(user.token),
  });
  expect(res.statusCode).toBe(200);
  const session = sessionOf(res.json().url);
  expect(await outcome(fake.signed(fake.pay(session.id)))).toBe('handled');
  return session;
}

describe('a top-up refunded or disputed at Stripe', () => {
  it('charge.refunded takes each refund off once, also when refund.created reports the same refund', async () => {
    const user = await createVerifiedUser(t);
    const session = await paidTopUp(user, 50);
    expect(await balance(user)).toBe(5000);
    const first = fake.signed(fake.refundCharge(session.id, 1500));
    expect(await deliverConcurrently(first)).toEqual(['duplicate', 'duplicate', 'handled']);
    expect(await balance(user)).toBe(3500);
    // The same refund reported by its own event: handled, but nothing taken twice.
    expect(await outcome(fake.signed(fake.refundCreatedOf(session.id)))).toBe('handled');
    expect(await balance(user)).toBe(3500);
    // A second refund: charge.refunded lists both; only the new one is taken off.
    const second = fake.signed(fake.refundCharge(session.id, 1000));
    expect(await outcome(second, t2.app)).toBe('handled');
    expect(await outcome(second)).toBe('duplicate');
    expect(await balance(user)).toBe(2500);
    const ledger = await t.database.db
      .selectFrom('credit_ledger')
      .select(['reason', 'cents'])
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    expect(ledger.map((r) => [r.reason, Number(r.cents)])).toEqual([
      ['topup', 5000],
      ['topup_refund', -1500],
      ['topup_refund', -1000],
    ]);
  });

  it('charge.dispute.created takes the top-up back even below zero; a negative balance refuses new holds', async () => {
    const user = await createVerifiedUser(t);
    const session = await paidTopUp(user, 20);
    const account = t.services.billing.account;
    await account.reserve(user.id, 1500, `test:work:${user.id}`);
    await account.settle(`test:work:${user.id}`, 1500); // $15 of the $20 spent
    const dispute = fake.signed(fake.dispute(session.id));
    expect(await deliverConcurrently(dispute)).toEqual(['duplicate', 'duplicate', 'handled']);
    expect(await balance(user)).toBe(500 - 2000);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/credits', headers: bearer(user.token) })).json().amount,
    ).toBe(-15);
    await expect(account.reserve(user.id, 1, `test:more:${user.id}`)).rejects.toMatchObject({
      code: 'insufficient_funds',
      status: 402,
    });
    // Paid work through the API is refused too: /get-leads grants nothing.
    const leads = await t.app.inject({
      method: 'POST',
      url: '/api/connect',
      headers: bearer(user.token),
      payload: { repository: 'contacts', path: '/get-leads', params: { credits: 5 } },
    });
    expect(leads.headers['x-credits-granted']).toBe('0');
    // A top-up that brings the balance back above zero lets work start again.
    await paidTopUp(user, 20);
    expect(await balance(user)).toBe(500);
    await account.reserve(user.id, 100, `test:again:${user.id}`);
  });

  it('a forged event (wrong secret, stale timestamp, altered body) is 400 and takes nothing', async () => {
    const user = await createVerifiedUser(t);
    const session = await paidTopUp(user, 10);
    const event = fake.dispute(session.id);
    expect((await deliver(fake.signed(event, { secret: 'whsec_forged' }))).statusCode).toBe(400);
    expect((await deliver(fake.signed(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 }))).statusCode).toBe(
      400,
    );
    const genuine = fake.signed(event);
    expect(
      (await deliver({ ...genuine, body: genuine.body.replace(`"amount": 1000`, `"amount": 999999`) })).statusCode,
    ).toBe(400);
    expect(await balance(user)).toBe(1000);
    expect(await outcome(genuine)).toBe('handled');
    expect(await balance(user)).toBe(0);
  });
});

describe('the subscription paying for a phone number', () => {
  async function numberWithSubscription(user: TestUser) {
    const setup = sessionOf(await t.services.billing.account.cardCheckoutUrl(user.id));
    expect(await outcome(fake.signed(fake.pay(setup.id)))).toBe('handled');
    const offer = (await search(t, user, 'sandbox', 'country=US&type=local')).find(
      (o) => o.capabilities.voice && o.capabilities.sms && o.addressRequirements === 'none',
    )!;
    const bought = await json(t, 'PUT', '/api/phone-numbers', user, { jwt: offer.price.jwt });
    expect(bought.statusCode, bought.body).toBe(200);
    const numberId = bought.json().id as string;
    const row = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('ref', '=', `phone-number:${numberId}`)
      .executeTakeFirstOrThrow();
    return { numberId, subscriptionId: row.provider_subscription_id };
  }
  const statusOf = async (user: TestUser, numberId: string) =>
    (await json(t, 'GET', `/api/phone-numbers/${numberId}`, user)).json().status;
  const sms = (user: TestUser, numberId: string) =>
    json(t, 'POST', '/api/sms/messages', user, { phoneNumberId: numberId, to: '+14155550123', body: 'hello' });

  it('invoice.payment_failed suspends the number (no SMS) once; a paid renewal restores it; an old failure replayed does not suspend it again', async () => {
    const user = await createVerifiedUser(t);
    // SMS cost money: a paid top-up first.
    await paidTopUp(user, 5);
    const { numberId, subscriptionId } = await numberWithSubscription(user);
    expect((await sms(user, numberId)).statusCode).toBe(200);

    const failed = fake.signed(fake.failInvoice(subscriptionId));
    expect(await deliverConcurrently(failed)).toEqual(['duplicate', 'duplicate', 'handled']);
    expect(await statusOf(user, numberId)).toBe('suspended');
    const refused = await sms(user, numberId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toMatch(/suspended/);

    expect(await outcome(fake.signed(fake.renew(subscriptionId)))).toBe('handled');
    expect(await statusOf(user, numberId)).toBe('active');
    expect((await sms(user, numberId)).statusCode).toBe(200);
    // The failure delivered again (Stripe's retry) changes nothing: the subscription as recorded is paid.
    expect(await outcome(failed)).toBe('duplicate');
    expect(await statusOf(user, numberId)).toBe('active');
  });

  it('customer.subscription.deleted (Stripe gave up) leaves the number suspended; the user sees it', async () => {
    const user = await createVerifiedUser(t);
    const { numberId, subscriptionId } = await numberWithSubscription(user);
    expect(await outcome(fake.signed(fake.end(subscriptionId)), t2.app)).toBe('handled');
    expect(await statusOf(user, numberId)).toBe('suspended');
    expect((await sms(user, numberId)).statusCode).toBe(409);
  });

  it('a forged invoice.payment_failed is 400 and suspends nothing', async () => {
    const user = await createVerifiedUser(t);
    const { numberId, subscriptionId } = await numberWithSubscription(user);
    const event = fake.failInvoice(subscriptionId);
    expect((await deliver(fake.signed(event, { secret: 'whsec_forged' }))).statusCode).toBe(400);
    expect(await statusOf(user, numberId)).toBe('active');
  });
});
