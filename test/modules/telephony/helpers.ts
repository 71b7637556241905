// Set-up shared by the telephony tests: apps with the in-memory billing
// account, objects in a user's stores, searches and purchases.
import { expect } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestApp, type TestAppOptions, createTestApp } from '../../support/app.js';
import { MemoryBillingAccount } from '../../support/billing-memory.js';
import { type TestUser, bearer } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';

export interface TelephonyTestApp extends TestApp {
  billing: MemoryBillingAccount;
  publicUrl: string;
}

/**
 * A test app listening on 127.0.0.1 at PUBLIC_URL, so provider callbacks
 * (sandbox or fake Twilio) reach it. Billing is the in-memory account (to
 * steer subscription failures) unless `realBilling` asks for billing's own,
 * with its sandbox checkout.
 */
export async function createTelephonyApp(
  options: TestAppOptions = {},
  { realBilling = false } = {},
): Promise<TelephonyTestApp> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const clock = options.clock ?? new ManualClock();
  const billing = new MemoryBillingAccount(clock, `${publicUrl}/api/sandbox/checkout`);
  const t = await createTestApp({
    ...options,
    clock,
    env: { PUBLIC_URL: publicUrl, ...options.env },
    config: { sandboxCallbackDelayMs: 5, ...options.config },
    billing: realBilling ? undefined : billing,
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, { billing, publicUrl });
}

export const json = (
  t: TestApp,
  method: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  user: TestUser | null,
  payload?: unknown,
  headers: Record<string, string> = {},
) =>
  t.app.inject({
    method,
    url,
    headers: { ...(user ? bearer(user.token) : {}), ...headers },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** Creates an (opaque) encrypted object in one of the user's stores; returns its id. */
export async function storeObject(
  t: TestApp,
  user: TestUser,
  store: 'agents' | 'contacts' | 'campaigns' | 'calls',
): Promise<string> {
  const root = (await json(t, 'GET', '/api/root', user)).json();
  const { id: storeId, keyId } = root.stores[store];
  const res = await json(t, 'PUT', '/api/objects', user, {
    keyId,
    content: Buffer.from(`${store} record`).toString('base64'),
    authTag: Buffer.alloc(16, 7).toString('base64'),
    relatedId: storeId,
  });
  expect(res.statusCode).toBe(200);
  return res.json().id;
}

export interface Offer {
  phoneNumber: string;
  capabilities: { voice: boolean; sms: boolean; mms: boolean };
  addressRequirements: string;
  price: { amount: number; currency: string; jwt: string };
}

export async function search(t: TestApp, user: TestUser, provider: string, query: string): Promise<Offer[]> {
  const res = await json(t, 'GET', `/api/phone-numbers/search/${provider}?${query}`, user);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Buys the first offer matching `pick` (card added first); returns the new number's id. */
export async function buyNumber(
  t: TelephonyTestApp,
  user: TestUser,
  pick: (o: Offer) => boolean = (o) => o.capabilities.voice && o.addressRequirements === 'none',
  provider = 'sandbox',
  query = 'country=US&type=local',
): Promise<string> {
  t.billing.addCard(user.id);
  const offer = (await search(t, user, provider, query)).find(pick);
  expect(offer).toBeDefined();
  const res = await json(t, 'PUT', '/api/phone-numbers', user, { jwt: offer!.price.jwt });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

/** Waits (polling, bounded) until `check` passes; for callbacks that arrive over HTTP. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (check(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}
