// Campaigns through the routes, with the timer sandbox's quick calls and the
// dialer driven round by round on a manual clock (SQLite, or PostgreSQL with
// DATABASE_URL).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer } from '../../support/factories.js';
import { callConfig } from '../calls/support.js';
import { campaign, caller, contacts, createCampaign, dialUntil, post } from './support.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp({ config: callConfig() });
});
afterEach(async () => {
  await t.close();
});

describe('campaigns', () => {
  it('calls every contact, retries the one who did not answer, and completes', async () => {
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'Grace', phone: '+14155550123' },
        { name: 'Alan', phone: '+14155550000' },
        { name: 'Ada', phone: '+14155550002' },
      ],
      retry: { maxAttempts: 2, delayMinutes: 1 },
      pacing: { callsPerMinute: 60 },
    });
    expect((await campaign(t, c.user, id)).status).toBe('draft');
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    await dialUntil(t, async () => (await campaign(t, c.user, id)).status === 'completed');
    const view = await campaign(t, c.user, id);
    expect(view.counts).toMatchObject({ total: 3, completed: 1, no_answer: 1, busy: 1, pending: 0, calling: 0 });
    expect(view.attempts).toBe(5);
    const list = await contacts(t, c.user, id);
    expect(list.map((x) => x.attempts.length)).toEqual([1, 2, 2]);
    expect(list[1]!.attempts.map((a) => a.outcome)).toEqual(['no_answer', 'no_answer']);
    // Every attempt is a call of the campaign.
    const call = await t.app.inject({
      method: 'GET',
      url: `/api/calls/${list[0]!.attempts[0]!.sessionId}`,
      headers: bearer(c.user.token),
    });
    expect(call.json()).toMatchObject({ campaignId: id, status: 'completed' });
    expect(view.spentUsd).toBeGreaterThan(0);
  });
});
