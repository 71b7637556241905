// The Stripe adapter end to end: the official SDK talks to a local
// Stripe-speaking server (test/support/stripe-fake.ts); webhooks arrive signed
// as Stripe signs them and are verified on the raw body.
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, type TestUser } from '../../support/factories.js';
import { type SignedWebhook, StripeFake } from '../../support/stripe-fake.js';

let fake: StripeFake;
let t: TestApp;
let t2: TestApp;
beforeAll(async () => {
  fake = await StripeFake.start();
  const env = { ...fake.env(), PUBLIC_URL: 'https://app.example.com' };
  t = await createTestApp({ env });
  t2 = await createTestApp({ env, shareDatabaseWith: t, clock: t.clock });
});
afterAll(async () => {
  await t2.close();
  await t.close();
  await fake.close();
});

const deliver = (w: SignedWebhook, app = t.app) =>
  app.inject({ method: 'POST', url: '/api/webhooks/stripe', payload: w.body, headers: w.headers });
const balance = async (user: TestUser) =>
  (await t.app.inject({ method: 'GET', url: '/api/credits', headers: bearer(user.token) })).json().amount;
const state = async (user: TestUser) =>
  (await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })).json();
const sessionOf = (url: string) => fake.get(url.split('/').pop()!);

async function openTopUp(user: TestUser, usd = 25) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/credits/add?amount=${usd}&returnTo=${encodeURIComponent('https://app.example.com/billing')}`,
    headers: bearer(user.token),
  });
  expect(res.statusCode).toBe(200);
  return sessionOf(res.json().url);
}

async function subscribe(user: TestUser, plan = 'starter') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/billing/plan',
    headers: bearer(user.token),
    payload: { plan },
  });
  expect(res.statusCode).toBe(200);
  const session = sessionOf(res.json().url);
  expect((await deliver(fake.signed(fake.pay(session.id)))).json()).toEqual({ received: true, outcome: 'handled' });
  return fake.get(fake.get(session.id).subscription);
}

describe('Stripe payments provider', () => {
  it('is the active provider; the sandbox pages are not mounted', async () => {
    expect(t.services.providers.payments.name).toBe('stripe');
    for (const url of ['/api/sandbox/checkout/x', '/api/sandbox/portal/x']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('route_not_found');
    }
  });

  it('top-up: a payment-mode Checkout Session; the signed webhook credits once and keeps the card', async () => {
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 25);
    expect(session).toMatchObject({
      mode: 'payment',
      amount_total: 2500,
      success_url: 'https://app.example.com/billing',
      metadata: { purpose: 'topup' },
    });
    const create = fake.requests.find(
      (r) => r.path === '/v1/checkout/sessions' && r.params.metadata?.sessionId === session.metadata.sessionId,
    )!;
    expect(create.params.payment_intent_data.setup_future_usage).toBe('off_session');
    expect(await balance(user)).toBe(0);
    const webhook = fake.signed(fake.pay(session.id, { brand: 'mastercard', last4: '4444' }));
    expect((await deliver(webhook)).json().outcome).toBe('handled');
    expect(await balance(user)).toBe(25);
    expect((await deliver(webhook)).json().outcome).toBe('duplicate');
    // Another event about the same session (async payment succeeded) does not credit again.
    const again = fake.event('checkout.session.async_payment_succeeded', fake.get(session.id));
    expect((await deliver(fake.signed(again))).json().outcome).toBe('handled');
    expect(await balance(user)).toBe(25);
    expect(await t.services.billing.account.hasCard(user.id)).toBe(true);
    const customer = await t.database.db
      .selectFrom('billing_customers')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(customer).toMatchObject({ provider: 'stripe', card_brand: 'mastercard', card_last4: '4444' });
  });

  it('a card removed at Stripe is no longer on file; removing another card changes nothing', async () => {
    const user = await createVerifiedUser(t);
    const first = await openTopUp(user, 10);
    await deliver(fake.signed(fake.pay(first.id)));
    const second = await openTopUp(user, 10);
    await deliver(fake.signed(fake.pay(second.id, { brand: 'amex', last4: '0005' })));
    const onFile = fake.get(fake.get(second.id).payment_intent).payment_method;
    const older = fake.get(fake.get(first.id).payment_intent).payment_method;
    expect((await deliver(fake.signed(fake.detach(older)))).json().outcome).toBe('ignored');
    expect(await t.services.billing.account.hasCard(user.id)).toBe(true);
    expect((await deliver(fake.signed(fake.detach(onFile)))).json().outcome).toBe('handled');
    expect(await t.services.billing.account.hasCard(user.id)).toBe(false);
    expect((await state(user)).hasCard).toBe(false);
  });

  it('refunds of a top-up made at Stripe take the money off once each, when they succeed', async () => {
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 50);
    await deliver(fake.signed(fake.pay(session.id)));
    const partial = fake.signed(fake.refund(session.id, 1500));
    expect((await deliver(partial)).json().outcome).toBe('handled');
    expect((await deliver(partial)).json().outcome).toBe('duplicate');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(3500);
    const pending = fake.refund(session.id, 1000, 'pending');
    expect((await deliver(fake.signed(pending))).json().outcome).toBe('ignored');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(3500);
    const settled = fake.settleRefund(pending.data.object.id);
    expect((await deliver(fake.signed(settled))).json().outcome).toBe('handled');
    // The same refund reported again under another event id is still taken off once.
    expect(
      (await deliver(fake.signed(fake.event('refund.updated', fake.get(pending.data.object.id))))).json().outcome,
    ).toBe('handled');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(2500);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/credits', headers: bearer(user.token) })).json().amount,
    ).toBe(25);
  });

  it('webhooks arrive over HTTP as Stripe sends them', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 12);
    const event = fake.pay(session.id);
    expect(await fake.send(event, `${address}/api/webhooks/stripe`)).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, outcome: 'handled' }),
    });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(1200);
  });

  it('concurrent deliveries of one event credit once', async () => {
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 40);
    const webhook = fake.signed(fake.pay(session.id));
    const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(webhook)));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(6).fill(200));
    expect(answers.filter((a) => a.json().outcome === 'handled')).toHaveLength(1);
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(4000);
  });

  it('two instances receiving the same event (concurrently on PostgreSQL) credit once', async () => {
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 60);
    const webhook = fake.signed(fake.pay(session.id));
    // Two SQLite connections in one process cannot overlap transactions (see account.test.ts): in turn there.
    const answers = process.env.DATABASE_URL
      ? await Promise.all([deliver(webhook), deliver(webhook, t2.app), deliver(webhook), deliver(webhook, t2.app)])
      : [await deliver(webhook, t2.app), await deliver(webhook), await deliver(webhook, t2.app)];
    expect(answers.filter((a) => a.json().outcome === 'handled')).toHaveLength(1);
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(6000);
  });

  it('bad signatures are 400 and change nothing; the genuine event still applies afterwards', async () => {
    const user = await createVerifiedUser(t);
    const session = await openTopUp(user, 30);
    const event = fake.pay(session.id);
    const wrongSecret = fake.signed(event, { secret: 'whsec_not_the_secret' });
    const stale = fake.signed(event, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const genuine = fake.signed(event);
    const tampered = { ...genuine, body: genuine.body.replace('"amount_total": 3000', '"amount_total": 300000') };
    expect(tampered.body).not.toBe(genuine.body);
    const unsigned = { ...genuine, headers: { 'content-type': 'application/json' } };
    for (const bad of [wrongSecret, stale, tampered, unsigned]) {
      const res = await deliver(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_signature');
    }
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(0);
    expect(await t.services.billing.account.hasCard(user.id)).toBe(false);
    expect((await deliver(genuine)).json().outcome).toBe('handled');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(3000);
  });

  it('a Stripe session that names one of our sessions without being the one opened for it credits nothing', async () => {
    const user = await createVerifiedUser(t);
    const ours = await openTopUp(user, 10);
    const url = new URL(fake.apiBase);
    const client = new Stripe(fake.secretKey, { host: url.hostname, port: url.port, protocol: 'http' });
    const forged = await client.checkout.sessions.create({
      mode: 'payment',
      customer: ours.customer,
      success_url: 'https://app.example.com/',
      metadata: { ...ours.metadata },
      line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 100_000, product_data: { name: 'x' } } }],
    });
    expect((await deliver(fake.signed(fake.pay(forged.id)))).json().outcome).toBe('ignored');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(0);
    expect((await deliver(fake.signed(fake.pay(ours.id)))).json().outcome).toBe('handled');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(1000);
  });

  it('an event for a session this service did not open, or of another type, is acknowledged and ignored', async () => {
    const other = fake.event('payment_intent.created', { id: 'pi_x', object: 'payment_intent' });
    expect((await deliver(fake.signed(other))).json()).toEqual({ received: true, outcome: 'ignored' });
    const foreign = fake.event('checkout.session.completed', {
      id: 'cs_test_foreign',
      object: 'checkout.session',
      metadata: {},
    });
    expect((await deliver(fake.signed(foreign))).json().outcome).toBe('ignored');
  });

  it('plan: subscription checkout → active; upgrade changes the same subscription to the new price', async () => {
    const user = await createVerifiedUser(t);
    const sub = await subscribe(user, 'starter');
    expect(sub.items.data[0].price).toMatchObject({
      unit_amount: 2900,
      lookup_key: 'workspace_plan_starter_2900',
      recurring: { interval: 'month' },
    });
    const s1 = await state(user);
    expect(s1).toMatchObject({ plan: { key: 'starter', priceUsd: 29, status: 'active' }, hasCard: true });
    expect(Date.parse(s1.period.start)).toBe(sub.items.data[0].current_period_start * 1000);

    const again = await t.app.inject({
      method: 'POST',
      url: '/api/billing/plan',
      headers: bearer(user.token),
      payload: { plan: 'growth' },
    });
    expect(again.statusCode).toBe(409);

    const up = await t.app.inject({
      method: 'POST',
      url: '/api/billing/plan',
      headers: bearer(user.token),
      payload: { plan: 'growth', mode: 'upgrade' },
    });
    expect(up.statusCode).toBe(200);
    const portal = fake.get(up.json().url.split('/').pop());
    expect(portal.flow).toMatchObject({
      type: 'subscription_update_confirm',
      subscription_update_confirm: { subscription: sub.id },
    });
    expect((await deliver(fake.signed(fake.confirmPortal(portal.id)))).json().outcome).toBe('handled');
    expect((await state(user)).plan).toMatchObject({ key: 'growth', priceUsd: 99 });
    const rows = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ provider_subscription_id: sub.id, plan_key: 'growth', monthly_cents: 9900 });
    const subscriptionsAtStripe = [...fake.objects.values()].filter(
      (o) => o.object === 'subscription' && o.customer === sub.customer,
    );
    expect(subscriptionsAtStripe).toHaveLength(1);
  });

  it('invoice.paid moves the period on; customer.subscription.deleted ends the plan', async () => {
    const user = await createVerifiedUser(t);
    const sub = await subscribe(user, 'scale');
    const before = await state(user);
    expect((await deliver(fake.signed(fake.renew(sub.id)))).json().outcome).toBe('handled');
    const after = await state(user);
    expect(Date.parse(after.period.start)).toBe(Date.parse(before.period.end));
    expect((await deliver(fake.signed(fake.end(sub.id)))).json().outcome).toBe('handled');
    expect((await state(user)).plan).toBeNull();
  });

  it('upgrade without a subscription is 409; an unknown plan is 400', async () => {
    const user = await createVerifiedUser(t);
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/billing/plan',
      headers: bearer(user.token),
      payload: { plan: 'growth', mode: 'upgrade' },
    });
    expect(up.statusCode).toBe(409);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/billing/plan',
      headers: bearer(user.token),
      payload: { plan: 'platinum' },
    });
    expect(unknown.statusCode).toBe(400);
  });

  it('item subscriptions: charged to the card on file, idempotent by ref, cancelled once; a provider failure is 502-class and keeps it', async () => {
    const user = await createVerifiedUser(t);
    const account = t.services.billing.account;
    const item = { ref: `number:${user.id}:+15557654321`, description: 'Phone number +15557654321', monthlyCents: 150 };
    await expect(account.startSubscription(user.id, item)).rejects.toMatchObject({ code: 'payment_method_required' });
    const setup = sessionOf(await account.cardCheckoutUrl(user.id));
    expect(setup.mode).toBe('setup');
    await deliver(fake.signed(fake.pay(setup.id)));
    const a = await account.startSubscription(user.id, item);
    const b = await account.startSubscription(user.id, item);
    expect(b).toEqual(a);
    const row = await t.database.db
      .selectFrom('billing_subscriptions')
      .selectAll()
      .where('id', '=', a.subscriptionId)
      .executeTakeFirstOrThrow();
    const atStripe = fake.get(row.provider_subscription_id);
    expect(atStripe).toMatchObject({ status: 'active', metadata: { ref: item.ref, kind: 'item' } });
    expect(atStripe.items.data[0].price.unit_amount).toBe(150);
    expect(atStripe.default_payment_method).toMatch(/^pm_/);

    // A declined card is 400 provider_refused (the customer's to fix), nothing recorded.
    fake.failNext(/^\/v1\/subscriptions$/, 402, 'Your card was declined.');
    await expect(account.startSubscription(user.id, { ...item, ref: `${item.ref}:2` })).rejects.toMatchObject({
      code: 'provider_refused',
      status: 400,
    });
    expect(
      await t.database.db.selectFrom('billing_subscriptions').select('id').where('ref', '=', `${item.ref}:2`).execute(),
    ).toEqual([]);

    fake.failNext(/^\/v1\/subscriptions\//, 500, 'Stripe is having a bad day');
    fake.failNext(/^\/v1\/subscriptions\//, 500, 'Stripe is having a bad day');
    fake.failNext(/^\/v1\/subscriptions\//, 500, 'Stripe is having a bad day');
    fake.failNext(/^\/v1\/subscriptions\//, 500, 'Stripe is having a bad day');
    await expect(account.cancelSubscription(user.id, a.subscriptionId)).rejects.toMatchObject({
      code: 'provider_error',
      status: 502,
    });
    fake.failures.length = 0;
    expect(fake.get(row.provider_subscription_id).status).toBe('active');
    await account.cancelSubscription(user.id, a.subscriptionId);
    expect(fake.get(row.provider_subscription_id).status).toBe('canceled');
    await account.cancelSubscription(user.id, a.subscriptionId);
  });

  it('a refused checkout creation answers 502 provider_error', async () => {
    const user = await createVerifiedUser(t);
    await openTopUp(user, 5); // the customer exists
    fake.failNext(/^\/v1\/checkout\/sessions$/, 400, 'Invalid currency');
    const res = await t.app.inject({ method: 'POST', url: '/api/credits/add', headers: bearer(user.token) });
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('provider_error');
  });

  it('the portal is a Billing Portal session of the customer', async () => {
    const user = await createVerifiedUser(t);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/billing/portal?returnTo=${encodeURIComponent('https://app.example.com/x')}`,
      headers: bearer(user.token),
    });
    expect(res.statusCode).toBe(200);
    const portal = fake.get(res.json().url.split('/').pop());
    expect(portal).toMatchObject({
      object: 'billing_portal.session',
      return_url: 'https://app.example.com/x',
      flow: null,
    });
    const evil = await t.app.inject({
      method: 'GET',
      url: `/api/billing/portal?returnTo=${encodeURIComponent('https://evil.example.net/x')}`,
      headers: bearer(user.token),
    });
    expect(evil.statusCode).toBe(400);
    expect(evil.json().code).toBe('invalid_return_url');
  });
});
