// The README walkthrough with billing's real account and its sandbox checkout:
// search → 409 with checkoutUrl → pay the sandbox page → buy → inbound
// configuration → attach → send SMS → delivered → delete (subscription cancelled).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifiedUser, topUp } from '../../support/factories.js';
import { openSse } from '../../support/sse-client.js';
import { type TelephonyTestApp, createTelephonyApp, eventually, json, search, storeObject } from './helpers.js';

let t: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp({}, { realBilling: true });
});
afterAll(() => t.close());

describe('telephony end to end (sandbox providers, real billing)', () => {
  it('walks from search to a delivered SMS and back', async () => {
    const user = await createVerifiedUser(t);
    const offer = (await search(t, user, 'sandbox', 'country=US&type=local')).find((o) => o.capabilities.voice)!;

    const refused = await json(t, 'PUT', '/api/phone-numbers', user, { jwt: offer.price.jwt });
    expect(refused.statusCode).toBe(409);
    const { code, checkoutUrl } = refused.json();
    expect(code).toBe('payment_method_required');
    expect(checkoutUrl).toMatch(new RegExp(`^${t.publicUrl}/api/sandbox/checkout/`));
    expect((await t.app.inject({ method: 'POST', url: new URL(checkoutUrl).pathname })).statusCode).toBe(200);
    expect((await json(t, 'GET', '/api/billing/state', user)).json().hasCard).toBe(true);

    const bought = await json(
      t,
      'PUT',
      '/api/phone-numbers',
      user,
      { jwt: offer.price.jwt, description: 'support' },
      { 'idempotency-key': 'e2e-buy' },
    );
    expect(bought.statusCode, bought.body).toBe(200);
    const numberId = bought.json().id;

    const agent = await storeObject(t, user, 'agents');
    const config = await json(t, 'PUT', '/api/inbound-configurations', user, {
      name: 'Front desk',
      agent: { id: agent, type: 'agents' },
      source: { type: 'manual' },
    });
    expect(config.statusCode).toBe(200);
    const attached = await json(t, 'POST', `/api/inbound-configurations/${config.json().id}`, user, {
      action: 'attach',
      phone_number_id: numberId,
    });
    expect(attached.json().inboundConfigurationId).toBe(config.json().id);

    const stream = await openSse(`${t.publicUrl}/api/events/sms_status`, {
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(stream.status).toBe(200);
    // An SMS costs money: without balance it is refused; $5 of credit through the sandbox checkout pays for it.
    const broke = await json(t, 'POST', '/api/sms/messages', user, {
      phoneNumberId: numberId,
      to: '+14155550123',
      body: 'Hello from the sandbox',
    });
    expect(broke.statusCode).toBe(402);
    await topUp(t, user, 5);
    const sms = await json(
      t,
      'POST',
      '/api/sms/messages',
      user,
      { phoneNumberId: numberId, to: '+14155550123', body: 'Hello from the sandbox' },
      { 'idempotency-key': 'e2e-sms' },
    );
    expect(sms.statusCode).toBe(200);
    const delivered = await eventually(
      async () => (await json(t, 'GET', `/api/sms/messages/${sms.json().id}`, user)).json(),
      (m) => m.status === 'delivered',
      'delivered',
    );
    expect(delivered.statuses.map((s: { status: string }) => s.status)).toEqual(['queued', 'sent', 'delivered']);
    // The stream carried every status as an sms_status event.
    const events = await stream.waitForEvents(3, 10_000);
    stream.close();
    expect(events.map((e) => e.event)).toEqual(['sms_status', 'sms_status', 'sms_status']);
    expect(events.map((e) => JSON.parse(e.data).status).sort()).toEqual(['delivered', 'queued', 'sent']);
    expect(JSON.parse(events[0].data)).toMatchObject({
      message_id: sms.json().id,
      phone_number_id: numberId,
      to: '+14155550123',
    });
    const outbox = (await t.app.inject({ method: 'GET', url: '/api/sandbox/outbox?to=%2B14155550123' })).json();
    expect(outbox[0]).toMatchObject({ channel: 'sms', body: 'Hello from the sandbox' });

    expect((await json(t, 'DELETE', `/api/phone-numbers/${numberId}`, user)).statusCode).toBe(204);
    expect((await json(t, 'GET', '/api/phone-numbers', user)).json()).toEqual([]);
  });
});
