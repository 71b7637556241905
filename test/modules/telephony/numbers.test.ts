// Phone numbers and addresses (spec 4.11) through the routes, with the sandbox
// provider and an in-memory billing account.
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestUser, createVerifiedUser, registerUser } from '../../support/factories.js';
import { type TelephonyTestApp, buyNumber, createTelephonyApp, json, search } from './helpers.js';

let t: TelephonyTestApp;
const clock = new ManualClock();
beforeAll(async () => {
  t = await createTelephonyApp({ clock });
});
afterAll(() => t.close());

const purchase = (user: TestUser, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  json(t, 'PUT', '/api/phone-numbers', user, body, headers);
const rows = (userId: string) =>
  t.database.db.selectFrom('phone_numbers').selectAll().where('user_id', '=', userId).execute();

describe('search', () => {
  it('lists provider slugs and the countries with number types', async () => {
    const user = await createVerifiedUser(t);
    expect((await json(t, 'GET', '/api/phone-numbers/search', user)).json()).toEqual(['sandbox']);
    const countries = (await json(t, 'GET', '/api/phone-numbers/search/sandbox/countries', user)).json();
    expect(countries).toContainEqual({ country: 'US', name: 'United States', types: ['local', 'tollFree'] });
    expect(countries).toContainEqual({ country: 'GB', name: 'United Kingdom', types: ['local', 'mobile', 'tollFree'] });
    expect(countries.length).toBeGreaterThanOrEqual(5);
    expect((await json(t, 'GET', '/api/phone-numbers/search/nope/countries', user)).statusCode).toBe(404);
  });

  it('answers spec 2.10 entries with prices from the pricing data and a user-bound 15-minute jwt', async () => {
    const user = await createVerifiedUser(t);
    const offers = await search(t, user, 'sandbox', 'country=US&type=local&limit=10');
    expect(offers).toHaveLength(10);
    for (const o of offers) {
      expect(o).toMatchObject({
        phoneNumber: expect.stringMatching(/^\+1\d{10}$/),
        addressRequirements: 'none',
        price: { amount: 1.15, currency: 'usd' },
      });
      const claims = decodeJwt(o.price.jwt);
      expect(claims).toMatchObject({
        sub: user.id,
        provider: 'sandbox',
        phoneNumber: o.phoneNumber,
        country: 'US',
        type: 'local',
        monthlyCents: 115,
        addressRequirements: 'none',
      });
      expect(claims.exp! - claims.iat!).toBe(900);
    }
    // Some SMS-only numbers, and regulated ones elsewhere.
    expect(offers.some((o) => !o.capabilities.voice && o.capabilities.sms)).toBe(true);
    expect((await search(t, user, 'sandbox', 'country=GB&type=local'))[0].addressRequirements).toBe('local');
    expect((await search(t, user, 'sandbox', 'country=DE&type=mobile'))[0].addressRequirements).toBe('foreign');
    expect((await search(t, user, 'sandbox', 'country=GB&type=tollFree'))[0].price.amount).toBe(2.15);
    expect(await search(t, user, 'sandbox', 'country=ZZ&type=local')).toEqual([]);
    expect((await json(t, 'GET', '/api/phone-numbers/search/sandbox?country=USA', user)).statusCode).toBe(400);
  });

  it('needs a phone-verified caller', async () => {
    const user = await registerUser(t);
    expect((await json(t, 'GET', '/api/phone-numbers/search', user)).statusCode).toBe(403);
    expect((await json(t, 'GET', '/api/phone-numbers', null)).statusCode).toBe(401);
  });
});

describe('purchase', () => {
  it('without a card answers 409 payment_method_required with a checkout URL and reserves nothing', async () => {
    const user = await createVerifiedUser(t);
    const [offer] = await search(t, user, 'sandbox', 'country=US&type=tollFree');
    const res = await purchase(user, { jwt: offer.price.jwt });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      message: expect.any(String),
      code: 'payment_method_required',
      checkoutUrl: `${t.publicUrl}/api/sandbox/checkout/setup-${user.id}`,
    });
    expect(await rows(user.id)).toEqual([]);
    expect(t.billing.activeFor(user.id)).toEqual([]);
    // The same jwt works once the card is there.
    t.billing.addCard(user.id);
    expect((await purchase(user, { jwt: offer.price.jwt })).statusCode).toBe(200);
  });

  it('reserves, subscribes and answers the id; the record follows DESIGN', async () => {
    const user = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const offer = (await search(t, user, 'sandbox', 'country=US&type=local')).find((o) => o.capabilities.voice)!;
    const res = await purchase(user, { jwt: offer.price.jwt, description: 'front desk' });
    expect(res.statusCode).toBe(200);
    const { id } = res.json();
    const got = (await json(t, 'GET', `/api/phone-numbers/${id}`, user)).json();
    expect(got).toEqual({
      id,
      phoneNumber: offer.phoneNumber,
      name: offer.phoneNumber,
      description: 'front desk',
      type: 'both',
      numberType: 'local',
      country: 'US',
      capabilities: offer.capabilities,
      provider: 'sandbox',
      monthlyPrice: { amount: 1.15, currency: 'usd' },
      inboundConfigurationId: null,
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(t.billing.activeFor(user.id)).toEqual([
      expect.objectContaining({ ref: `phone-number:${id}`, monthlyCents: 115 }),
    ]);
    // Bought numbers are no longer offered, to anyone.
    const other = await createVerifiedUser(t);
    expect(
      (await search(t, other, 'sandbox', 'country=US&type=local&limit=50')).map((o) => o.phoneNumber),
    ).not.toContain(offer.phoneNumber);
  });

  it('an SMS-only number is of type outbound', async () => {
    const user = await createVerifiedUser(t);
    const id = await buyNumber(t, user, (o) => !o.capabilities.voice);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, user)).json()).toMatchObject({
      type: 'outbound',
      capabilities: { voice: false, sms: true },
    });
  });

  it('refuses forged, tampered, foreign-key, expired, other users’ and spent jwts with 400 invalid_token', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const [offer, second] = await search(t, user, 'sandbox', 'country=CA&type=local');
    const claims = decodeJwt(offer.price.jwt);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'workspace-1' })
      .sign(privateKey);
    const hs = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', kid: 'workspace-1' })
      .sign(new TextEncoder().encode('x'.repeat(32)));
    const [h, , s] = offer.price.jwt.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, monthlyCents: 1 })).toString('base64url')}.${s}`;
    for (const jwt of ['not-a-jwt', forged, hs, tampered]) {
      const res = await purchase(user, { jwt });
      expect(res.statusCode, jwt).toBe(400);
      expect(res.json().code).toBe('invalid_token');
    }
    t.billing.addCard(other.id);
    expect((await purchase(other, { jwt: offer.price.jwt })).json().code).toBe('invalid_token');

    expect((await purchase(user, { jwt: offer.price.jwt })).statusCode).toBe(200);
    const again = await purchase(user, { jwt: offer.price.jwt });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'invalid_token', message: expect.stringContaining('already used') });

    clock.advance(15 * 60_000 + 1000);
    try {
      const expired = await purchase(user, { jwt: second.price.jwt });
      expect(expired.statusCode).toBe(400);
      expect(expired.json().message).toContain('expired');
    } finally {
      clock.advance(-(15 * 60_000 + 1000));
    }
    expect(await rows(other.id)).toEqual([]);
    expect((await rows(user.id)).map((r) => r.phone_number)).toEqual([offer.phoneNumber]);
  });

  it('two concurrent purchases with one jwt buy the number once', async () => {
    const user = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const [offer] = await search(t, user, 'sandbox', 'country=AU&type=mobile');
    const answers = await Promise.all(Array.from({ length: 5 }, () => purchase(user, { jwt: offer.price.jwt })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 400, 400, 400, 400]);
    expect(await rows(user.id)).toHaveLength(1);
    expect(t.billing.activeFor(user.id)).toHaveLength(1);
  });

  it('two users racing for one number: one owner, the other 409', async () => {
    const [a, b] = [await createVerifiedUser(t), await createVerifiedUser(t)];
    t.billing.addCard(a.id);
    t.billing.addCard(b.id);
    const [offerA] = await search(t, a, 'sandbox', 'country=AU&type=local');
    const offerB = (await search(t, b, 'sandbox', 'country=AU&type=local')).find(
      (o) => o.phoneNumber === offerA.phoneNumber,
    )!;
    const fields = { addressSid: undefined };
    const addrA = (
      await json(t, 'PUT', '/api/phone-numbers/address', a, {
        street: '1 George St',
        city: 'Sydney',
        region: 'NSW',
        postalCode: '2000',
        isoCountry: 'AU',
      })
    ).json().addressSid;
    const addrB = (
      await json(t, 'PUT', '/api/phone-numbers/address', b, {
        street: '2 George St',
        city: 'Sydney',
        region: 'NSW',
        postalCode: '2000',
        isoCountry: 'AU',
      })
    ).json().addressSid;
    const answers = await Promise.all([
      purchase(a, { ...fields, jwt: offerA.price.jwt, addressSid: addrA }),
      purchase(b, { jwt: offerB.price.jwt, addressSid: addrB }),
    ]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect([...(await rows(a.id)), ...(await rows(b.id))]).toHaveLength(1);
  });

  it('with an Idempotency-Key a retry replays the answer and buys once', async () => {
    const user = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const [offer] = await search(t, user, 'sandbox', 'country=US&type=tollFree');
    const headers = { 'idempotency-key': `buy-${user.id}` };
    const first = await purchase(user, { jwt: offer.price.jwt }, headers);
    const retry = await purchase(user, { jwt: offer.price.jwt }, headers);
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
    expect(await rows(user.id)).toHaveLength(1);
    const other = await purchase(user, { jwt: offer.price.jwt, description: 'different' }, headers);
    expect(other.statusCode).toBe(422);
  });

  it('releases the number again and answers 502 when the subscription cannot start; the jwt may be retried', async () => {
    const user = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const [offer] = await search(t, user, 'sandbox', 'country=GB&type=mobile');
    t.billing.failNextStart();
    const res = await purchase(user, { jwt: offer.price.jwt });
    expect(res.statusCode).toBe(502);
    expect(res.json().code).toBe('provider_error');
    expect(await rows(user.id)).toEqual([]);
    expect((await purchase(user, { jwt: offer.price.jwt })).statusCode).toBe(200);
  });

  it('needs a matching address for regulated numbers', async () => {
    const user = await createVerifiedUser(t);
    t.billing.addCard(user.id);
    const address = async (isoCountry: string) => {
      const res = await json(t, 'PUT', '/api/phone-numbers/address', user, {
        street: '1 Main St',
        city: 'Town',
        region: 'R',
        postalCode: '12345',
        isoCountry,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().addressSid).toMatch(/^AD[0-9a-f]{32}$/);
      return res.json().addressSid as string;
    };
    const [gbUs, gb] = [await address('US'), await address('gb')];
    const [local] = await search(t, user, 'sandbox', 'country=GB&type=local');
    expect(local.addressRequirements).toBe('local');
    expect((await purchase(user, { jwt: local.price.jwt })).json()).toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('local address'),
    });
    expect((await purchase(user, { jwt: local.price.jwt, addressSid: gbUs })).statusCode).toBe(400);
    expect((await purchase(user, { jwt: local.price.jwt, addressSid: 'ADnotmine' })).statusCode).toBe(400);
    expect((await purchase(user, { jwt: local.price.jwt, addressSid: gb })).statusCode).toBe(200);

    const [foreign] = await search(t, user, 'sandbox', 'country=DE&type=mobile');
    const de = await address('DE');
    expect((await purchase(user, { jwt: foreign.price.jwt, addressSid: de })).statusCode).toBe(400);
    expect((await purchase(user, { jwt: foreign.price.jwt, addressSid: gbUs })).statusCode).toBe(200);

    // Another user's address is not yours.
    const other = await createVerifiedUser(t);
    t.billing.addCard(other.id);
    const [otherLocal] = await search(t, other, 'sandbox', 'country=GB&type=local');
    expect(
      (await json(t, 'PUT', '/api/phone-numbers', other, { jwt: otherLocal.price.jwt, addressSid: gb })).statusCode,
    ).toBe(400);
  });

  it('validates address fields', async () => {
    const user = await createVerifiedUser(t);
    expect(
      (
        await json(t, 'PUT', '/api/phone-numbers/address', user, {
          street: '1 Main St',
          city: 'Town',
          region: 'R',
          postalCode: '1',
          isoCountry: 'USA',
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (
        await json(t, 'PUT', '/api/phone-numbers/address', user, {
          city: 'Town',
          region: 'R',
          postalCode: '1',
          isoCountry: 'US',
        })
      ).statusCode,
    ).toBe(400);
  });
});

describe('list, get, patch, delete', () => {
  it('lists own numbers; patches name and description', async () => {
    const user = await createVerifiedUser(t);
    const id = await buyNumber(t, user);
    const patched = await json(t, 'PATCH', `/api/phone-numbers/${id}`, user, {
      name: 'Sales',
      description: 'inbound leads',
    });
    expect(patched.json()).toMatchObject({ id, name: 'Sales', description: 'inbound leads' });
    expect((await json(t, 'PATCH', `/api/phone-numbers/${id}`, user, { description: null })).json()).toMatchObject({
      name: 'Sales',
      description: null,
    });
    // Only name and description change; other fields are ignored.
    expect(
      (await json(t, 'PATCH', `/api/phone-numbers/${id}`, user, { phoneNumber: '+1' })).json().phoneNumber,
    ).not.toBe('+1');
    expect((await json(t, 'PATCH', `/api/phone-numbers/${id}`, user, { name: '' })).statusCode).toBe(400);
    expect((await json(t, 'GET', '/api/phone-numbers', user)).json().map((n: { id: string }) => n.id)).toEqual([id]);
  });

  it("another user's number is 404 for get, patch and delete, and stays", async () => {
    const owner = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const id = await buyNumber(t, owner);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, other)).statusCode).toBe(404);
    expect((await json(t, 'PATCH', `/api/phone-numbers/${id}`, other, { name: 'x' })).statusCode).toBe(404);
    expect((await json(t, 'DELETE', `/api/phone-numbers/${id}`, other)).statusCode).toBe(404);
    expect((await json(t, 'GET', '/api/phone-numbers', other)).json()).toEqual([]);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, owner)).json().status).toBe('active');
  });

  it('delete cancels the subscription first: failure is 502 and the number stays; then it is released and gone', async () => {
    const user = await createVerifiedUser(t);
    const id = await buyNumber(t, user);
    const [sub] = t.billing.activeFor(user.id);
    t.billing.failNextCancel();
    const failed = await json(t, 'DELETE', `/api/phone-numbers/${id}`, user);
    expect(failed.statusCode).toBe(502);
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, user)).json().status).toBe('active');
    expect(sub.status).toBe('active');

    expect((await json(t, 'DELETE', `/api/phone-numbers/${id}`, user)).statusCode).toBe(204);
    expect(sub.status).toBe('canceled');
    expect((await json(t, 'GET', `/api/phone-numbers/${id}`, user)).statusCode).toBe(404);
    expect((await json(t, 'DELETE', `/api/phone-numbers/${id}`, user)).statusCode).toBe(404);
  });

  it('concurrent deletes release once and leave nothing behind', async () => {
    const user = await createVerifiedUser(t);
    const id = await buyNumber(t, user);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => json(t, 'DELETE', `/api/phone-numbers/${id}`, user)),
    );
    expect(answers.every((a) => a.statusCode === 204 || a.statusCode === 404)).toBe(true);
    expect(answers.some((a) => a.statusCode === 204)).toBe(true);
    expect(await rows(user.id)).toEqual([]);
    expect(t.billing.activeFor(user.id)).toEqual([]);
  });
});
