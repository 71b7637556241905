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

// Calls of the timer sandbox end in real time: on a loaded machine (PostgreSQL, the real-time files all at once) a campaign's rounds took 40 s.
describe('campaigns', { timeout: 120_000 }, () => {
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
    // ...and its encrypted record in the calls store names the campaign too.
    const session = await t.database.db
      .selectFrom('call_sessions')
      .select('record_object_id')
      .where('id', '=', list[0]!.attempts[0]!.sessionId)
      .executeTakeFirstOrThrow();
    const record = JSON.parse(
      (await t.services.data.records.read(c.user.id, 'calls', session.record_object_id!)).toString('utf8'),
    );
    expect(record.campaign_id).toBe(id);
    expect(view.spentUsd).toBeGreaterThan(0);
  });

  it('writes its definition encrypted to the campaigns store, and sends campaign_status events and webhooks', async () => {
    const c = await caller(t);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/campaigns',
      headers: bearer(c.user.token),
      payload: {
        name: 'Hooked',
        agent: { name: 'Amy' },
        fromNumberIds: [c.numberId],
        contacts: [{ name: 'Grace', phone: '+14155550123', timezone: 'Europe/Paris' }],
        webhook: 'http://127.0.0.1:9/hooks',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id, objectId } = created.json();
    const stored = JSON.parse((await t.services.data.records.read(c.user.id, 'campaigns', objectId)).toString('utf8'));
    expect(stored).toMatchObject({
      id,
      name: 'Hooked',
      agent: { name: 'Amy' },
      contacts: [{ index: 0, name: 'Grace', phone: '+14155550123', timezone: 'Europe/Paris' }],
      retry: { maxAttempts: 2, delayMinutes: 60 },
      voicemail: 'leave_message',
    });
    // The object itself is ciphertext: the name is not in it.
    const object = await t.database.db
      .selectFrom('objects')
      .selectAll()
      .where('id', '=', objectId)
      .executeTakeFirstOrThrow();
    expect(Buffer.from(object.content as Uint8Array).toString('utf8')).not.toContain('Grace');
    await post(t, c.user, `/api/campaigns/${id}/start`);
    await dialUntil(t, async () => (await campaign(t, c.user, id)).status === 'completed');
    const events = await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', c.user.id)
      .where('type', '=', 'campaign_status')
      .orderBy('id')
      .execute();
    const payloads = events.map((e) => JSON.parse(e.payload as string));
    expect(payloads[0]).toMatchObject({ campaign_id: id, status: 'running', counts: { total: 1, pending: 1 } });
    expect(payloads.at(-1)).toMatchObject({ campaign_id: id, status: 'completed', counts: { total: 1, completed: 1 } });
    const hooks = await t.database.db
      .selectFrom('webhook_deliveries')
      .select(['event_type', 'body', 'url'])
      .where('user_id', '=', c.user.id)
      .execute();
    const statuses = hooks.filter((h) => h.event_type === 'campaign_status').map((h) => JSON.parse(h.body).data.status);
    expect(statuses[0]).toBe('running');
    expect(statuses.at(-1)).toBe('completed');
    expect(hooks.every((h) => h.url === 'http://127.0.0.1:9/hooks')).toBe(true);
    // The call's own call_status events carry the campaign.
    const callEvents = await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', c.user.id)
      .where('type', '=', 'call_status')
      .execute();
    expect(callEvents.length).toBeGreaterThan(0);
    expect(callEvents.every((e) => JSON.parse(e.payload as string).campaign_id === id)).toBe(true);
  });
});
