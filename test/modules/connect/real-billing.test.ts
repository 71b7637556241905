// /get-leads against billing's real BillingAccount (ledger, holds, usage) and
// its sandbox checkout: the composition root wires it when no override is given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type ConnectorFake, startConnectorFake } from '../../support/connector-fake.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';

let t: TestApp;
let fake: ConnectorFake;
beforeAll(async () => {
  fake = await startConnectorFake();
  t = await createTestApp({ env: { CONNECTOR_URL: fake.url, LEAD_PRICE_USD: '0.50' } });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function topUp(user: TestUser, usd: number) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/credits/add?amount=${usd}`,
    headers: bearer(user.token),
  });
  expect(res.statusCode).toBe(200);
  expect((await t.app.inject({ method: 'POST', url: new URL(res.json().url).pathname })).statusCode).toBe(200);
}

const ledger = async (userId: string) =>
  (
    await t.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', userId).orderBy('id').execute()
  ).map((r) => [r.reason, Number(r.cents)]);

const leads = (user: TestUser, params: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/api/connect',
    headers: bearer(user.token),
    payload: { repository: 'contacts', path: '/get-leads', params: { format: 'ndjson', ...params } },
  });

describe('/get-leads with the real billing account', () => {
  it('without a plan, credits are what the balance buys; the whole hold is kept when all are delivered', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user, 5); // 10 leads at $0.50
    const res = await leads(user, { credits: 15 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('10');
    expect(res.headers['x-objects-written']).toBe('10');
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(0);
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -500],
    ]);
  });

  it('a connector failure returns the undelivered part to the ledger and records usage for the delivered', async () => {
    const user = await createVerifiedUser(t);
    await topUp(user, 5);
    const res = await leads(user, { credits: 10, failAfter: 4 });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ written: 4, credits: 10 });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(300);
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -500],
      ['release', 300],
    ]);
    const state = await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) });
    expect(state.json().usageRaw.leads).toBe(4);
  });

  it('no balance and no plan: 204 at once, nothing streamed', async () => {
    const user = await createVerifiedUser(t);
    const calls = fake.requests.length;
    const res = await leads(user, { credits: 3 });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-credits-granted']).toBe('0');
    expect(fake.requests.length).toBe(calls);
    expect(await ledger(user.id)).toEqual([]);
  });
});
