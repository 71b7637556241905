// Helpers of the campaign tests: an app whose calls the quick timer sandbox
// plays, a funded user with a voice number, a campaign made through the
// route, and driving the dialer round by round on the app's manual clock.
import { expect } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { sandboxNumber } from '../calls/sandbox-support.js';

export async function caller(t: TestApp, usd = 5): Promise<{ user: TestUser; numberId: string }> {
  const user = await createFundedUser(t, usd);
  return { user, numberId: await sandboxNumber(t, user) };
}

export async function createCampaign(
  t: TestApp,
  c: { user: TestUser; numberId: string },
  body: Record<string, unknown>,
): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/campaigns',
    headers: bearer(c.user.token),
    payload: {
      name: 'Test',
      agent: { name: 'Amy', voicemailMessage: 'Please call us back.' },
      fromNumberIds: [c.numberId],
      ...body,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

export async function post(t: TestApp, user: TestUser, url: string) {
  return t.app.inject({ method: 'POST', url, headers: bearer(user.token) });
}

export async function campaign(t: TestApp, user: TestUser, id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/campaigns/${id}`, headers: bearer(user.token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

export async function contacts(t: TestApp, user: TestUser, id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/campaigns/${id}/contacts`, headers: bearer(user.token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as Array<{
    index: number;
    phone: string;
    status: string;
    attempts: Array<{ sessionId: string; outcome?: string }>;
  }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until no contact of any campaign is being called (their calls ended and were told to the campaign), at most 10 s. */
export async function untilNoneCalling(t: TestApp): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const row = await t.database.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'calling')
      .executeTakeFirstOrThrow();
    if (Number(row.n) === 0) return;
    await sleep(20);
  }
  throw new Error('calls of the campaign did not end');
}

/** Runs dialer rounds (and waits for the timer sandbox's calls to end) until `done` or `rounds` pass. */
export async function dialUntil(
  t: TestApp,
  done: () => Promise<boolean>,
  options: { stepMs?: number; rounds?: number } = {},
) {
  const dialer = t.services.campaigns.dialer;
  for (let i = 0; i < (options.rounds ?? 200); i++) {
    await dialer.round();
    await dialer.settled();
    await untilNoneCalling(t);
    if (await done()) return;
    t.clock.advance(options.stepMs ?? 1000);
  }
  throw new Error('the campaign did not get there');
}
