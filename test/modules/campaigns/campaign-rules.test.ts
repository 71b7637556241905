// The rules of a campaign, each on its own (SQLite, or PostgreSQL with
// DATABASE_URL): business hours on a clock that moves, each retry rule, the
// budget and balance pauses, the do-not-call list on campaigns and on single
// calls, refused state moves and another user's campaign. Calls are the timer
// sandbox's (a few hundred ms); the dialer runs round by round.
// Each waits on real-time calls: on a loaded machine (the real-time files all at once, PostgreSQL) one took 27 s, so 120 s each.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, topUp } from '../../support/factories.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { sandboxNumber } from '../calls/sandbox-support.js';
import { callConfig } from '../calls/support.js';
import { campaign, caller, contacts, createCampaign, dialUntil, post, untilNoneCalling } from './support.js';

let t: TestApp;
// Saturday 5 December 2026, 12:00 UTC.
const SATURDAY_NOON = Date.parse('2026-12-05T12:00:00Z');
beforeEach(async () => {
  t = await createTestApp({ config: callConfig(), clock: new ManualClock(SATURDAY_NOON) });
});
afterEach(async () => {
  await t.close();
});

const row = (campaignId: string, idx: number) =>
  t.database.db
    .selectFrom('campaign_contacts')
    .selectAll()
    .where('campaign_id', '=', campaignId)
    .where('idx', '=', idx)
    .executeTakeFirstOrThrow();

/** One dialer round, then until the calls it placed have ended and been told to their campaign (the timer sandbox's are quick). */
async function roundAndSettle() {
  await t.services.campaigns.dialer.round();
  await t.services.campaigns.dialer.settled();
  await untilNoneCalling(t);
}

/** What GET /api/campaigns/{id} and its contacts answer, read from the service (a session token expires across days of the clock). */
const view = (userId: string, id: string) => t.services.campaigns.campaigns.get(userId, id);
const contactList = async (userId: string, id: string) =>
  (await t.services.campaigns.campaigns.contacts(userId, id, { limit: 100 })).items;

describe('business hours', { timeout: 120_000 }, () => {
  it("dials each contact only on the schedule's days and hours in its own time zone", async () => {
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'London', phone: '+442079460123' },
        { name: 'New York', phone: '+14155550123', timezone: 'America/New_York' },
      ],
      schedule: { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '09:00', to: '17:00' },
      pacing: { callsPerMinute: 600 },
    });
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    await roundAndSettle();
    // Saturday: nobody; each waits for Monday 09:00 in its own zone (London from its country, New York its own).
    expect((await view(c.user.id, id)).attempts).toBe(0);
    expect(Number((await row(id, 0)).next_attempt_at)).toBe(Date.parse('2026-12-07T09:00:00Z'));
    expect(Number((await row(id, 1)).next_attempt_at)).toBe(Date.parse('2026-12-07T14:00:00Z'));
    t.clock.advance(Date.parse('2026-12-07T08:59:00Z') - t.clock.now());
    await roundAndSettle();
    expect((await view(c.user.id, id)).attempts).toBe(0);
    t.clock.advance(60_000);
    await roundAndSettle();
    let list = await contactList(c.user.id, id);
    expect(list.map((x) => x.attempts.length)).toEqual([1, 0]);
    t.clock.advance(Date.parse('2026-12-07T14:00:00Z') - t.clock.now());
    await roundAndSettle();
    list = await contactList(c.user.id, id);
    expect(list.map((x) => x.attempts.length)).toEqual([1, 1]);
  });
});

describe('retries', { timeout: 120_000 }, () => {
  it('retries only the outcomes of retry.on, after delayMinutes, up to maxAttempts', async () => {
    t.clock.advance(Date.parse('2026-12-07T10:00:00Z') - t.clock.now());
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'No answer', phone: '+14155550000' },
        { name: 'Busy', phone: '+14155550002' },
      ],
      retry: { maxAttempts: 3, delayMinutes: 10, on: ['no_answer'] },
      pacing: { callsPerMinute: 600 },
    });
    await post(t, c.user, `/api/campaigns/${id}/start`);
    // 600 a minute: one dial each 100 ms.
    await roundAndSettle();
    t.clock.advance(100);
    await roundAndSettle();
    let list = await contacts(t, c.user, id);
    expect(list.map((x) => x.status)).toEqual(['pending', 'busy']);
    expect(list[0]!.attempts.map((a) => a.outcome)).toEqual(['no_answer']);
    // Not before the delay.
    t.clock.advance(9 * 60_000);
    await roundAndSettle();
    expect((await contacts(t, c.user, id))[0]!.attempts).toHaveLength(1);
    t.clock.advance(60_000);
    await roundAndSettle();
    expect((await contacts(t, c.user, id))[0]!.attempts).toHaveLength(2);
    t.clock.advance(10 * 60_000);
    await roundAndSettle();
    list = await contacts(t, c.user, id);
    expect(list[0]!.attempts).toHaveLength(3);
    expect(list[0]!.status).toBe('no_answer');
    expect(list[1]!.attempts).toHaveLength(1);
    await roundAndSettle();
    expect((await campaign(t, c.user, id)).status).toBe('completed');
  });

  it("treats an instance's stopped call as failed: retried by default", async () => {
    // Calls that stay ringing: the only end is the one an orphan sweep would report.
    await t.close();
    t = await createTestApp({
      config: callConfig({ sandboxStepMs: 600_000 }),
      clock: new ManualClock(Date.parse('2026-12-07T10:00:00Z')),
    });
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [{ name: 'Grace', phone: '+14155550123' }],
      retry: { maxAttempts: 2, delayMinutes: 0 },
    });
    await post(t, c.user, `/api/campaigns/${id}/start`);
    // A call recorded and then ended as an instance that stopped would end it.
    const [contact] = await t.database.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', id)
      .execute();
    expect(contact!.status).toBe('pending');
    await t.services.campaigns.dialer.round();
    await t.services.campaigns.dialer.settled();
    const attempt = await t.database.db
      .selectFrom('campaign_attempts')
      .selectAll()
      .where('campaign_id', '=', id)
      .executeTakeFirstOrThrow();
    await t.services.campaigns.dialer.callFinished(
      { id: attempt.session_id, userId: c.user.id },
      {
        session_id: attempt.session_id,
        direction: 'outbound',
        status: 'failed',
        at: new Date().toISOString(),
        outcome: 'instance_stopped',
        campaign_id: id,
      },
      { chargedCents: 0 },
    );
    const after = await contacts(t, c.user, id);
    expect(after[0]!.status).toBe('pending');
    expect(after[0]!.attempts[0]!.outcome).toBe('failed');
  });
});

describe('money', { timeout: 120_000 }, () => {
  it('pauses itself at budgetUsd', async () => {
    t.clock.advance(Date.parse('2026-12-07T10:00:00Z') - t.clock.now());
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'A', phone: '+14155550111' },
        { name: 'B', phone: '+14155550112' },
        { name: 'C', phone: '+14155550113' },
      ],
      budgetUsd: 0.01,
      pacing: { callsPerMinute: 1 },
    });
    await post(t, c.user, `/api/campaigns/${id}/start`);
    await dialUntil(t, async () => (await campaign(t, c.user, id)).status === 'paused', { stepMs: 100 });
    const view = await campaign(t, c.user, id);
    expect(view.reason).toBe('budget_reached');
    expect(view.spentUsd).toBeGreaterThanOrEqual(0.01);
    expect(view.attempts).toBe(1);
    // Paused: nothing more is dialled.
    t.clock.advance(10 * 60_000);
    await roundAndSettle();
    expect((await campaign(t, c.user, id)).attempts).toBe(1);
  });

  it('refuses to start without money for one minute (402), and pauses itself when the balance cannot pay the next call', async () => {
    t.clock.advance(Date.parse('2026-12-07T10:00:00Z') - t.clock.now());
    const user = await createVerifiedUser(t);
    const numberId = await sandboxNumber(t, user);
    const c = { user, numberId };
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'A', phone: '+14155550111' },
        { name: 'B', phone: '+14155550112' },
      ],
      pacing: { callsPerMinute: 600, maxConcurrent: 2 },
    });
    const refused = await post(t, user, `/api/campaigns/${id}/start`);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().code).toBe('insufficient_funds');
    // Enough for one call's hold only (3 cents: two minutes at $0.014): the second call of the round cannot be paid.
    await topUp(t, user, 5);
    await t.database.db
      .insertInto('credit_ledger')
      .values({ user_id: user.id, cents: -497, reason: 'test', ref: `test:${id}`, created_at: t.clock.now() })
      .execute();
    await t.database.db.updateTable('campaigns').set({ next_dial_at: 0 }).where('id', '=', id).execute();
    expect((await post(t, user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    t.clock.advance(1000);
    await roundAndSettle();
    const view = await campaign(t, user, id);
    expect(view.status).toBe('paused');
    expect(view.reason).toBe('insufficient_funds');
    expect(view.attempts).toBe(1);
    const list = await contacts(t, user, id);
    expect(list.find((x) => x.attempts.length === 0)!.status).toBe('pending');
    // Topped up and resumed: the rest is called.
    await topUp(t, user, 5);
    expect((await post(t, user, `/api/campaigns/${id}/resume`)).statusCode).toBe(200);
    await dialUntil(t, async () => (await campaign(t, user, id)).status === 'completed', { stepMs: 200 });
    expect((await campaign(t, user, id)).counts.completed).toBe(2);
  });
});

describe('do-not-call', { timeout: 120_000 }, () => {
  it('never dials a listed contact, and refuses a single call to a listed number with 409', async () => {
    t.clock.advance(Date.parse('2026-12-07T10:00:00Z') - t.clock.now());
    const c = await caller(t);
    const put = await t.app.inject({
      method: 'PUT',
      url: '/api/do-not-call',
      headers: bearer(c.user.token),
      payload: { phone: '+14155550199', reason: 'asked by email' },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ phone: '+14155550199', source: 'api', reason: 'asked by email' });
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'Listed', phone: '+14155550199' },
        { name: 'Free', phone: '+14155550198' },
      ],
      pacing: { callsPerMinute: 600 },
    });
    await post(t, c.user, `/api/campaigns/${id}/start`);
    await dialUntil(t, async () => (await campaign(t, c.user, id)).status === 'completed', { stepMs: 200 });
    const list = await contacts(t, c.user, id);
    expect(list.map((x) => [x.status, x.attempts.length])).toEqual([
      ['do_not_call', 0],
      ['completed', 1],
    ]);

    const server = await registerServer(t, c.user);
    const call = async (phone: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/session/call',
        headers: bearer(c.user.token),
        payload: {
          server: server.name,
          jwt: await signPayload(
            server,
            {
              agent: { name: 'Amy' },
              contact: { name: 'X', phone },
              type: 'prompt',
              prompt: 'Hi',
              phoneNumberId: c.numberId,
            },
            { now: t.clock.now() },
          ),
        },
      });
    const refused = await call('+14155550199');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('do_not_call');
    expect((await call('+14155550198')).statusCode).toBe(204);
    const listed = await t.app.inject({ method: 'GET', url: '/api/do-not-call', headers: bearer(c.user.token) });
    expect(listed.json().items.map((i: { phone: string }) => i.phone)).toEqual(['+14155550199']);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: '/api/do-not-call/%2B14155550199',
      headers: bearer(c.user.token),
    });
    expect(removed.statusCode).toBe(204);
    expect((await call('+14155550199')).statusCode).toBe(204);
  });
});

describe('states and owners', { timeout: 120_000 }, () => {
  it("refuses moves the status does not allow with 409, and hides another user's campaign (404)", async () => {
    const c = await caller(t);
    const id = await createCampaign(t, c, { contacts: [{ name: 'A', phone: '+14155550111' }] });
    for (const move of ['pause', 'resume']) {
      const res = await post(t, c.user, `/api/campaigns/${id}/${move}`);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('invalid_state');
    }
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(409);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/campaigns/${id}`, headers: bearer(c.user.token) });
    expect(del.statusCode).toBe(409);
    expect((await post(t, c.user, `/api/campaigns/${id}/pause`)).statusCode).toBe(200);
    expect((await post(t, c.user, `/api/campaigns/${id}/cancel`)).statusCode).toBe(200);
    expect((await post(t, c.user, `/api/campaigns/${id}/resume`)).statusCode).toBe(409);

    const other = await caller(t);
    for (const req of [
      { method: 'GET' as const, url: `/api/campaigns/${id}` },
      { method: 'GET' as const, url: `/api/campaigns/${id}/contacts` },
      { method: 'POST' as const, url: `/api/campaigns/${id}/start` },
      { method: 'DELETE' as const, url: `/api/campaigns/${id}` },
    ]) {
      const res = await t.app.inject({ ...req, headers: bearer(other.user.token) });
      expect(res.statusCode, req.url).toBe(404);
    }
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/campaigns', headers: bearer(other.user.token) })).json().items,
    ).toEqual([]);
    // Someone else's number is not a campaign's to call from (404), a bad phone or zone is 422.
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/campaigns',
      headers: bearer(other.user.token),
      payload: {
        name: 'x',
        agent: { name: 'Amy' },
        fromNumberIds: [c.numberId],
        contacts: [{ name: 'A', phone: '+14155550111' }],
      },
    });
    expect(res.statusCode).toBe(404);
    for (const contact of [
      { name: 'A', phone: '0207946' },
      { name: 'A', phone: '+14155550111', timezone: 'Mars/Olympus' },
    ]) {
      const bad = await t.app.inject({
        method: 'POST',
        url: '/api/campaigns',
        headers: bearer(other.user.token),
        payload: { name: 'x', agent: { name: 'Amy' }, fromNumberIds: [other.numberId], contacts: [contact] },
      });
      expect(bad.statusCode, bad.body).toBe(422);
      expect(bad.json().code).toBe('invalid_campaign');
    }
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/campaigns/${id}`, headers: bearer(c.user.token) })).statusCode,
    ).toBe(204);
  });
});

describe('the account and the agent', { timeout: 120_000 }, () => {
  it("waits for the account's concurrency limit without counting a refused call as an attempt", async () => {
    await t.close();
    t = await createTestApp({
      env: { CALL_CONCURRENCY_PER_USER: '1' },
      config: callConfig({ sandboxStepMs: 100 }),
      clock: new ManualClock(Date.parse('2026-12-07T10:00:00Z')),
    });
    const c = await caller(t);
    const id = await createCampaign(t, c, {
      contacts: [
        { name: 'A', phone: '+14155550111' },
        { name: 'B', phone: '+14155550112' },
        { name: 'C', phone: '+14155550113' },
      ],
      pacing: { callsPerMinute: 600, maxConcurrent: 3 },
      retry: { maxAttempts: 1 },
    });
    await post(t, c.user, `/api/campaigns/${id}/start`);
    // Three slots in a row while the first call still rings: the others are refused by the account (429) and wait.
    for (let i = 0; i < 3; i++) {
      await t.services.campaigns.dialer.round();
      await t.services.campaigns.dialer.settled();
      t.clock.advance(100);
    }
    const waiting = await t.database.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    expect(waiting.length).toBeGreaterThanOrEqual(1);
    expect(waiting.every((w) => Number(w.attempt_count) === 0)).toBe(true);
    await dialUntil(t, async () => (await view(c.user.id, id)).status === 'completed', { stepMs: 5000 });
    const list = await contactList(c.user.id, id);
    expect(list.map((x) => [x.status, x.attempts.length])).toEqual([
      ['completed', 1],
      ['completed', 1],
      ['completed', 1],
    ]);
  });

  it('leaves the agent\'s voicemail message by default, and none with voicemail: "hang_up"', async () => {
    const c = await caller(t);
    const agent = { name: 'Amy', voicemailMessage: 'Please call us back.' };
    const assembled = async (voicemail?: string) => {
      const id = await createCampaign(t, c, {
        agent,
        contacts: [{ name: 'A', phone: '+14155550111', fields: { sandboxScript: ['Hello?', 'Bye.'], plan: 'gold' } }],
        ...(voicemail ? { voicemail } : {}),
      });
      const row = await t.database.db
        .selectFrom('campaigns')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const contact = await t.database.db
        .selectFrom('campaign_contacts')
        .selectAll()
        .where('campaign_id', '=', id)
        .executeTakeFirstOrThrow();
      const { campaignCall } = await import('../../../src/modules/campaigns/dialer.js');
      return campaignCall(
        t.services.calls.callSessions.sessions,
        c.user.id,
        t.services.campaigns.campaigns.definition(row),
        {
          ...contact,
          idx: Number(contact.idx),
        } as never,
      );
    };
    const left = await assembled();
    expect(left.context?.voicemailMessage).toBe('Please call us back.');
    // The contact's fields reach the agent; its sandbox script is the callee's, not a field.
    expect(left.systemPrompt).toContain('plan: gold');
    expect(left.systemPrompt).not.toContain('sandboxScript');
    expect(left.sandboxScript).toEqual(['Hello?', 'Bye.']);
    expect((await assembled('hang_up')).context?.voicemailMessage).toBeUndefined();
  });
});
