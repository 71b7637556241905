// PostgreSQL going away mid-campaign (every connection of the instance cut
// from outside, as a restart does): the dialer's rounds fail without ending
// the process or the campaign, dialling pauses, and it resumes by itself once
// the database answers again; a claim cut off before its call was recorded
// goes back after its lease, and a call cut off is retried. Every contact
// completes, never dialled twice at once. (PostgreSQL only: skipped without
// DATABASE_URL.)
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { callConfig } from '../calls/support.js';
import { caller, createCampaign, post, untilNoneCalling } from './support.js';

const name = `wsapi-campaign-away-${randomBytes(4).toString('hex')}`;
let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function cutConnections(): Promise<number> {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    const cut = await admin.query(
      "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name like $1 || '%' and pid <> pg_backend_pid()) t",
      [name],
    );
    return cut.rows[0].n;
  } finally {
    await admin.end();
  }
}

describe.skipIf(!process.env.DATABASE_URL)('a campaign while PostgreSQL goes away', () => {
  it('pauses dialling and resumes by itself; every contact completes, never dialled twice at once', {
    timeout: 90_000,
  }, async () => {
    t = await createTestApp({
      pgApplicationName: name,
      config: callConfig(),
      clock: new ManualClock(Date.parse('2026-12-07T10:00:00Z')),
    });
    const c = await caller(t, 20);
    const phones = Array.from({ length: 6 }, (_, i) => ({ name: `C${i}`, phone: `+1415558${String(1000 + i)}` }));
    const id = await createCampaign(t, c, {
      contacts: phones,
      pacing: { callsPerMinute: 600 },
      retry: { maxAttempts: 3, delayMinutes: 0 },
    });
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
    const dialer = t.services.campaigns.dialer;
    await dialer.round();
    await dialer.settled();
    await untilNoneCalling(t);
    // Cut while a round runs: the round fails inside (logged), the process and the campaign stay.
    t.clock.advance(100);
    const [cut] = await Promise.all([cutConnections(), dialer.round()]);
    expect(cut).toBeGreaterThanOrEqual(1);
    await dialer.settled();
    // The pool reconnects by itself: later rounds dial the rest; a claim left by the cut round goes back after its
    // lease (61 s), and a call whose end the cut kept from the campaign is looked up by the sweep after 5 minutes.
    for (let i = 0; i < 40; i++) {
      t.clock.advance(i === 20 ? 61_000 : i === 30 ? 5 * 60_000 : 100);
      await dialer.round().catch(() => {});
      await dialer.settled();
      const counts = await t.services.campaigns.campaigns.get(c.user.id, id).catch(() => null);
      if (counts?.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const contacts = await t.database.db
      .selectFrom('campaign_contacts')
      .select(['idx', 'status', 'session_id', 'claimed_until'])
      .where('campaign_id', '=', id)
      .execute();
    expect(
      contacts.filter((x) => x.status !== 'completed'),
      JSON.stringify(contacts),
    ).toEqual([]);
    await untilNoneCalling(t);
    const view = await t.services.campaigns.campaigns.get(c.user.id, id);
    expect(view.status).toBe('completed');
    expect(view.counts.completed).toBe(6);
    // Each contact's attempts, one after another: each call began after the one before it had ended.
    const calls = await t.database.db
      .selectFrom('campaign_attempts')
      .innerJoin('call_sessions', 'call_sessions.id', 'campaign_attempts.session_id')
      .select(['campaign_attempts.idx', 'call_sessions.created_at', 'call_sessions.updated_at'])
      .where('campaign_attempts.campaign_id', '=', id)
      .orderBy('call_sessions.created_at')
      .execute();
    expect(new Set(calls.map((x) => x.idx)).size).toBe(6);
    for (const idx of [0, 1, 2, 3, 4, 5]) {
      const mine = calls.filter((x) => x.idx === idx);
      for (let i = 1; i < mine.length; i++)
        expect(Number(mine[i]!.created_at)).toBeGreaterThanOrEqual(Number(mine[i - 1]!.updated_at));
    }
  });
});
