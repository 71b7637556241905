// The Twilio telephony adapter against a local server speaking Twilio's REST
// API, on its own and end to end through the routes (numbers, addresses,
// attach, SMS with Twilio's signed status callbacks).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { TwilioTelephonyProvider } from '../../src/providers/telephony/twilio.js';
import { createVerifiedUser } from '../support/factories.js';
import { type TwilioFake, startTwilioFake } from '../support/twilio-fake.js';
import {
  type TelephonyTestApp,
  buyNumber,
  createTelephonyApp,
  eventually,
  json,
  search,
  storeObject,
} from '../modules/telephony/helpers.js';

let fake: TwilioFake;
let t: TelephonyTestApp;
beforeAll(async () => {
  fake = await startTwilioFake();
  t = await createTelephonyApp({
    config: {
      twilio: { accountSid: fake.accountSid, authToken: fake.authToken, from: fake.from, apiBase: fake.apiBase },
    },
  });
});
/** A verified user with $10 of prepaid credit in the in-memory billing account (SMS cost money). */
const fundedUser = async () => {
  const user = await createVerifiedUser(t);
  t.billing.fund(user.id, 1000);
  return user;
};

afterAll(async () => {
  await t.close();
  await fake.close();
});

const provider = (authToken = fake.authToken) =>
  new TwilioTelephonyProvider({ accountSid: fake.accountSid, authToken, apiBase: fake.apiBase });

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('TwilioTelephonyProvider', () => {
  it('lists countries and types from AvailablePhoneNumbers', async () => {
    expect(await provider().listCountries()).toEqual(
      expect.arrayContaining([
        { country: 'US', types: ['local', 'tollFree'] },
        { country: 'GB', types: ['local'] },
      ]),
    );
    const req = fake.requests.at(-1)!;
    expect(req).toMatchObject({
      method: 'GET',
      path: `/2010-04-01/Accounts/${fake.accountSid}/AvailablePhoneNumbers.json`,
      auth: { user: fake.accountSid, password: fake.authToken },
    });
  });

  it("searches and converts Twilio's fields (SMS/MMS spelling, address_requirements any → local)", async () => {
    const us = await provider().searchNumbers({ country: 'US', type: 'local', limit: 3, contains: '415' });
    expect(us).toHaveLength(3);
    expect(us[0]).toEqual({
      phoneNumber: '+14155550200',
      friendlyName: '+14155550200',
      country: 'US',
      type: 'local',
      capabilities: { voice: true, sms: true, mms: true },
      addressRequirements: 'none',
      locality: 'San Francisco',
      region: 'CA',
    });
    expect(new URL(`http://x${fake.requests.at(-1)!.path}`).pathname).toBe(
      `/2010-04-01/Accounts/${fake.accountSid}/AvailablePhoneNumbers/US/Local.json`,
    );
    expect((await provider().searchNumbers({ country: 'GB', type: 'local', limit: 5 }))[0].addressRequirements).toBe(
      'local',
    );
    expect(await provider().searchNumbers({ country: 'GB', type: 'mobile', limit: 5 })).toEqual([]); // Twilio: 404
  });

  it('buys, points the voice URL, releases; a taken number is conflict, bad credentials provider_error', async () => {
    const p = provider();
    const { sid } = await p.buyNumber({ phoneNumber: '+18005550199', friendlyName: 'test' });
    expect(fake.incoming.get(sid)).toMatchObject({ phoneNumber: '+18005550199', friendlyName: 'test' });
    await p.setVoiceUrl(sid, 'https://example.com/voice');
    expect(fake.requests.at(-1)!.form).toEqual({ VoiceUrl: 'https://example.com/voice', VoiceMethod: 'POST' });
    expect(fake.incoming.get(sid)!.voiceUrl).toBe('https://example.com/voice');
    await p.setVoiceUrl(sid, null);
    expect(fake.incoming.get(sid)!.voiceUrl).toBe('');
    expect((await failure(p.buyNumber({ phoneNumber: '+18005550199', friendlyName: 'again' }))).code).toBe('conflict');
    await p.releaseNumber(sid);
    expect(fake.incoming.has(sid)).toBe(false);
    await p.releaseNumber(sid); // already gone: fine
    expect((await failure(provider('wrong').listCountries())).code).toBe('provider_error');
  });

  it('creates addresses; a refused address is provider_refused (400)', async () => {
    const { addressSid } = await provider().createAddress({
      customerName: 'Ada',
      street: '1 Main',
      city: 'London',
      region: 'LDN',
      postalCode: 'N1 1AA',
      isoCountry: 'GB',
    });
    expect(addressSid).toMatch(/^AD/);
    expect(fake.requests.at(-1)!.form).toEqual({
      CustomerName: 'Ada',
      Street: '1 Main',
      City: 'London',
      Region: 'LDN',
      PostalCode: 'N1 1AA',
      IsoCountry: 'GB',
    });
    const err = await failure(
      provider().createAddress({
        customerName: 'Ada',
        street: '1 Main',
        city: 'X',
        region: 'Y',
        postalCode: '00000',
        isoCountry: 'GB',
      }),
    );
    expect(err).toMatchObject({ code: 'provider_refused', status: 400 });
  });
});

describe('telephony routes with Twilio', () => {
  it('offers twilio next to the sandbox outside production', async () => {
    const user = await fundedUser();
    expect((await json(t, 'GET', '/api/phone-numbers/search', user)).json()).toEqual(['twilio', 'sandbox']);
  });

  it('buys a regulated number with an address, attaches it (voice URL set), sends SMS, records Twilio’s signed callbacks, detaches and releases', async () => {
    const user = await fundedUser();
    t.billing.addCard(user.id);
    const address = await json(t, 'PUT', '/api/phone-numbers/address', user, {
      street: '1 Main',
      city: 'London',
      region: 'LDN',
      postalCode: 'N1 1AA',
      isoCountry: 'GB',
    });
    expect(address.statusCode).toBe(200);
    expect(fake.addresses.at(-1)!.params.CustomerName).toBe('Ada Lovelace');
    const [offer] = await search(t, user, 'twilio', 'country=GB&type=local');
    const bought = await json(t, 'PUT', '/api/phone-numbers', user, {
      jwt: offer.price.jwt,
      addressSid: address.json().addressSid,
    });
    expect(bought.statusCode, bought.body).toBe(200);
    const id = bought.json().id;
    const incoming = [...fake.incoming.values()].find((n) => n.phoneNumber === offer.phoneNumber)!;
    expect(incoming.addressSid).toBe(address.json().addressSid);

    const agent = await storeObject(t, user, 'agents');
    const config = (
      await json(t, 'PUT', '/api/inbound-configurations', user, {
        name: 'Desk',
        agent: { id: agent, type: 'agents' },
        source: { type: 'manual' },
      })
    ).json();
    expect(
      (
        await json(t, 'POST', `/api/inbound-configurations/${config.id}`, user, {
          action: 'attach',
          phone_number_id: id,
        })
      ).statusCode,
    ).toBe(200);
    expect(incoming.voiceUrl).toBe(`${t.publicUrl}/api/webhooks/twilio/voice/${id}`);

    const sms = (
      await json(t, 'POST', '/api/sms/messages', user, {
        phoneNumberId: id,
        to: '+14155550123',
        body: 'hello from twilio',
      })
    ).json();
    const accepted = fake.messages.at(-1)!;
    expect(accepted).toMatchObject({
      from: offer.phoneNumber,
      to: '+14155550123',
      statusCallback: `${t.publicUrl}/api/webhooks/twilio/sms/${sms.id}`,
    });
    expect(sms).toMatchObject({ provider: 'twilio', providerSid: accepted.sid, status: 'queued' });
    expect(await fake.sendStatusCallback(accepted.sid, 'sent')).toBe(204);
    expect(await fake.sendStatusCallback(accepted.sid, 'delivered')).toBe(204);
    expect(await fake.sendStatusCallback(accepted.sid, 'delivered')).toBe(204);
    const after = await eventually(
      async () => (await json(t, 'GET', `/api/sms/messages/${sms.id}`, user)).json(),
      (m) => m.status === 'delivered',
      'delivered',
    );
    expect(after.statuses.map((s: { status: string }) => s.status)).toEqual(['queued', 'sent', 'delivered']);

    expect(
      (
        await json(t, 'POST', `/api/inbound-configurations/${config.id}`, user, {
          action: 'detach',
          phone_number_id: id,
        })
      ).statusCode,
    ).toBe(200);
    expect(incoming.voiceUrl).toBe('');
    expect((await json(t, 'DELETE', `/api/phone-numbers/${id}`, user)).statusCode).toBe(204);
    expect(fake.incoming.has(incoming.sid)).toBe(false);
  });

  it('a sandbox-signed callback is refused for a Twilio message', async () => {
    const user = await fundedUser();
    const id = await buyNumber(t, user, (o) => o.capabilities.voice, 'twilio', 'country=US&type=local');
    const sms = (
      await json(t, 'POST', '/api/sms/messages', user, { phoneNumberId: id, to: '+14155550123', body: 'x' })
    ).json();
    const twilio = (await import('twilio')).default;
    const { sandboxTwilioToken } = await import('../../src/providers/index.js');
    const params = { MessageSid: sms.providerSid, MessageStatus: 'delivered' };
    const url = `${t.publicUrl}/api/webhooks/twilio/sms/${sms.id}`;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/twilio/sms/${sms.id}`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilio.getExpectedTwilioSignature(sandboxTwilioToken(t.secrets.masterKey), url, params),
      },
      payload: new URLSearchParams(params).toString(),
    });
    expect(res.statusCode).toBe(400);
    expect((await json(t, 'GET', `/api/sms/messages/${sms.id}`, user)).json().status).toBe('queued');
  });

  it('subscription failure releases the Twilio number; a failed release leaves it `releasing` for a retried DELETE', async () => {
    const user = await fundedUser();
    t.billing.addCard(user.id);
    const [offer] = await search(t, user, 'twilio', 'country=US&type=local&contains=4155550203');
    t.billing.failNextStart();
    expect((await json(t, 'PUT', '/api/phone-numbers', user, { jwt: offer.price.jwt })).statusCode).toBe(502);
    expect([...fake.incoming.values()].some((n) => n.phoneNumber === offer.phoneNumber)).toBe(false);

    const id = (await json(t, 'PUT', '/api/phone-numbers', user, { jwt: offer.price.jwt })).json().id;
    fake.failRequest('DELETE', /^\/IncomingPhoneNumbers\//, 500, 20500, 'Internal Server Error');
    const failed = await json(t, 'DELETE', `/api/phone-numbers/${id}`, user);
    expect(failed.statusCode).toBe(502);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, user)).json().status).toBe('releasing');
    expect(t.billing.activeFor(user.id)).toEqual([]);
    expect((await json(t, 'DELETE', `/api/phone-numbers/${id}`, user)).statusCode).toBe(204);
    expect([...fake.incoming.values()].some((n) => n.phoneNumber === offer.phoneNumber)).toBe(false);
  });

  it('a voice webhook Twilio refuses leaves the number detached (502)', async () => {
    const user = await fundedUser();
    const id = await buyNumber(t, user, (o) => o.capabilities.voice, 'twilio', 'country=US&type=local');
    const agent = await storeObject(t, user, 'agents');
    const config = (
      await json(t, 'PUT', '/api/inbound-configurations', user, {
        name: 'Desk',
        agent: { id: agent, type: 'agents' },
        source: { type: 'manual' },
      })
    ).json();
    fake.failRequest('POST', /^\/IncomingPhoneNumbers\/PN/, 503, 20503, 'Service Unavailable');
    expect(
      (
        await json(t, 'POST', `/api/inbound-configurations/${config.id}`, user, {
          action: 'attach',
          phone_number_id: id,
        })
      ).statusCode,
    ).toBe(502);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, user)).json().inboundConfigurationId).toBeNull();
  });
});
