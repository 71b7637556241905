// Connector paths are normalised before anything else: no spelling of
// /get-leads streams leads without their billing, and no path leaves
// CONNECTOR_URL's base path. The fake connector serves leads leniently (any
// case, slashes, dot segments, escapes), as a real web framework may, and
// records the path exactly as it arrived.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorUrl } from '../../../src/providers/connector/http.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type ConnectorFake, startConnectorFake } from '../../support/connector-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';

let t: TestApp;
let fake: ConnectorFake;
beforeAll(async () => {
  fake = await startConnectorFake();
  t = await createTestApp({ env: { CONNECTOR_URL: `${fake.url}/base`, LEAD_PRICE_USD: '0.50' } });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const connect = (user: TestUser, path: string, params: Record<string, unknown> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/api/connect',
    headers: bearer(user.token),
    payload: { repository: 'contacts', path, params: { format: 'ndjson', ...params } },
  });

async function topUp(user: TestUser, usd: number) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/credits/add?amount=${usd}`,
    headers: bearer(user.token),
  });
  expect((await t.app.inject({ method: 'POST', url: new URL(res.json().url).pathname })).statusCode).toBe(200);
}

const LEADS_SPELLINGS = [
  '/GET-LEADS',
  '/Get-Leads',
  '/get-leads/',
  '//get-leads',
  '/get-leads//',
  '/get-leads/.',
  '/./get-leads',
  '/x/../get-leads',
  '/x/%2e%2e/get-leads',
  '/x/%2E./get-leads',
  '/x/.%2e/get-leads',
  '/%2e/get-leads',
  '/%67et-leads',
  '/get%2Dleads',
];

const ESCAPES = [
  '/..',
  '/../secret',
  '/x/../../secret',
  '/%2e%2e/get-leads',
  '/%2E%2E/secret',
  '/%2e./secret',
  '/.%2E/secret',
  '/x/%2e%2e/%2e%2e/secret',
  '/a%2f..%2f..%2fsecret',
  '/a%5c..%5csecret',
  '/get-leads;x=1',
  '/get-leads%3bx',
  '/get-leads%00',
  '/a%zz',
];

describe('connector paths', () => {
  it.each(LEADS_SPELLINGS)(
    '%s is /get-leads with its billing: no balance, no plan → nothing granted, the connector not called',
    async (path) => {
      const user = await createVerifiedUser(t);
      const before = fake.requests.length;
      const res = await connect(user, path, { credits: 5 });
      expect(res.statusCode).toBe(204);
      expect(res.headers['x-credits-granted']).toBe('0');
      expect(res.headers['x-objects-written']).toBe('0');
      expect(fake.requests.length).toBe(before);
    },
  );

  it.each(ESCAPES)('%s cannot leave the base path: 400, the connector not called', async (path) => {
    const user = await createVerifiedUser(t);
    const before = fake.requests.length;
    const res = await connect(user, path, { credits: 5 });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_input');
    expect(fake.requests.length).toBe(before);
  });

  it('a paid spelling of /get-leads is sent as /get-leads under the base, with the granted credits, and charged', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user, 5); // 10 leads
    const res = await connect(user, '/x/%2E%2e//GET-LEADS/', { credits: 25 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('10');
    expect(res.headers['x-objects-written']).toBe('10');
    expect(fake.requests.at(-1)).toMatchObject({ path: '/base/get-leads', params: { credits: 10 } });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(0);
  });

  it.each([
    ['/a/./b//c/', '/base/a/b/c'],
    ['/Records', '/base/Records'],
    ['/%7Euser/%41', '/base/~user/A'],
    ['/a/%c3%a9', '/base/a/%C3%A9'],
    ['/a/b/../c', '/base/a/c'],
    ['/', '/base/'],
  ])('%s reaches the connector as %s', async (path, received) => {
    const user = await createVerifiedUser(t);
    const res = await connect(user, path, { count: 1 });
    expect(res.statusCode).toBe(204);
    expect(fake.requests.at(-1)!.path).toBe(received);
  });
});

describe('connectorUrl (the WHATWG URL of a normalised path)', () => {
  it.each([
    ['http://127.0.0.1:9/base', '/get-leads', 'http://127.0.0.1:9/base/get-leads'],
    ['http://127.0.0.1:9/base/', '/x', 'http://127.0.0.1:9/base/x'],
    ['http://127.0.0.1:9', '/x', 'http://127.0.0.1:9/x'],
  ])('%s + %s = %s', (base, path, url) => {
    expect(connectorUrl(base, path).href).toBe(url);
  });

  it.each(['/%2e%2e/x', '/../x', '/a/%2E./x', '/a\\..\\x'])('refuses %s, which the parser would move', (path) => {
    expect(() => connectorUrl('http://127.0.0.1:9/base', path)).toThrow(/does not stay under/);
  });

  it('refuses a path that would change the host', () => {
    expect(() => connectorUrl('http://127.0.0.1:9', '//evil.example/x')).toThrow(/does not stay under/);
  });
});
