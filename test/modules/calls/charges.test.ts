// What calls cost (DESIGN "Money for calls and SMS"), against billing's real
// ledger, holds and usage: the refusal without money, the hold at start, the
// allowance first and per started minute after, settlement once (replays,
// concurrency, failure and housekeeping), the concurrency limit under
// parallel starts and across two instances on one database, and inbound calls.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallCharges, callCostCents } from '../../../src/modules/calls/charges.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser, createVerifiedUser, topUp } from '../../support/factories.js';
import { eventually } from '../events/support.js';
import { assembledCall, callConfig } from './support.js';

// A plan with one included call of 60 seconds, and one that raises the concurrency limit.
const plansFile = join(mkdtempSync(join(tmpdir(), 'plans-')), 'plans.json');
writeFileSync(
  plansFile,
  JSON.stringify([
    {
      key: 'tiny',
      name: 'Tiny',
      priceUsd: 5,
      included: { seconds_inbound: 120, seconds_outbound: 60, calls_inbound: 2, calls_outbound: 1, leads: 0 },
    },
    {
      key: 'team',
      name: 'Team',
      priceUsd: 50,
      included: { seconds_inbound: 0, seconds_outbound: 100_000, calls_inbound: 0, calls_outbound: 1_000, leads: 0 },
      callConcurrency: 4,
    },
  ]),
);
const env = { PLANS_FILE: plansFile, CALL_CONCURRENCY_PER_USER: '2', CALL_MAX_SECONDS: '3600' };

let t: TestApp;
let charges: CallCharges;
beforeAll(async () => {
  t = await createTestApp({ env, config: callConfig() });
  charges = t.services.calls.charges!;
});
afterAll(() => t.close());

const account = () => t.services.billing.account;
const ledger = async (userId: string) =>
  (
    await t.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', userId).orderBy('id').execute()
  ).map((r) => [r.reason, Number(r.cents)]);
const state = async (user: TestUser) =>
  (await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })).json();
const charge = (ref: string) =>
  t.database.db.selectFrom('call_charges').selectAll().where('ref', '=', ref).executeTakeFirst();
const session = (id: string) =>
  t.database.db.selectFrom('call_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
let seq = 0;
const ref = () => `test-call-${process.pid}-${Date.now()}-${seq++}`;

async function subscribe(app: TestApp, user: TestUser, plan: string) {
  const res = await app.app.inject({
    method: 'POST',
    url: '/api/billing/plan',
    headers: bearer(user.token),
    payload: { plan },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect((await app.app.inject({ method: 'POST', url: new URL(res.json().url).pathname })).statusCode).toBe(200);
}

describe('starting a call costs money or allowance', () => {
  it('no plan and no balance: 402 insufficient_funds, no session, nothing in the ledger; premium destinations are not offered', async () => {
    const user = await createVerifiedUser(t);
    await expect(t.services.calls.calls.start(user.id, assembledCall(), null)).rejects.toMatchObject({
      code: 'insufficient_funds',
      status: 402,
    });
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
    expect(await ledger(user.id)).toEqual([]);
    // Jamaica (+1 876) shares +1 with the US but is not priced, nor are US premium-rate 900 numbers: refused whatever the balance.
    await topUp(t, user, 5);
    for (const to of ['+18765550123', '+19005550123', '+79995550123']) {
      await expect(t.services.calls.calls.start(user.id, assembledCall({ to }), null)).rejects.toMatchObject({
        code: 'unsupported_destination',
        status: 400,
      });
    }
    expect(await ledger(user.id)).toEqual([['topup', 500]]);
  });

  it('a funded call holds its longest duration at the rate, charges the started minutes and returns the rest; ledger, usage and state agree', async () => {
    const user = await createFundedUser(t, 5);
    const { sessionId } = await t.services.calls.calls.start(user.id, assembledCall(), null);
    // US outbound: 140 ten-thousandths a minute; 3,600 s → 60 minutes → 84 cents held.
    expect(await charge(sessionId)).toMatchObject({
      state: 'open',
      country: 'US',
      rate: 140,
      max_seconds: 3600,
      allowance_seconds: 0,
      hold_cents: 84,
    });
    expect(await account().balanceCents(user.id)).toBe(416);
    await eventually(async () => (await session(sessionId)).finished_at !== null, 10_000, 'call finished');
    const seconds = Number((await session(sessionId)).duration_seconds);
    expect(seconds).toBeGreaterThanOrEqual(1);
    const cost = callCostCents(seconds, 140);
    expect(cost).toBe(Math.ceil((Math.ceil(seconds / 60) * 140) / 100));
    expect(await charge(sessionId)).toMatchObject({
      state: 'settled',
      seconds,
      charged_cents: cost,
      allowance_seconds: 0,
    });
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -84],
      ['release', 84 - cost],
    ]);
    const s = await state(user);
    expect(s.balance).toEqual({ amount: (500 - cost) / 100, currency: 'usd' });
    expect(s.usageRaw).toMatchObject({ calls_outbound: 1, seconds_outbound: seconds });
  });

  it('the balance shortens the call: the hold is what the balance buys in whole minutes, and the audio server is told the limit', async () => {
    const user = await createFundedUser(t, 5);
    const rate = t.services.billing.catalog.voiceRate('CH', 'outbound')!;
    const minutes = Math.floor((500 * 100) / rate);
    expect(minutes * 60).toBeLessThan(3600);
    const result = await charges.authorizeCall(user.id, { ref: ref(), direction: 'outbound', number: '+41445550123' });
    expect(result).toMatchObject({
      ok: true,
      country: 'CH',
      maxDurationSeconds: minutes * 60,
      holdCents: Math.ceil((minutes * rate) / 100),
      allowanceSeconds: 0,
    });
    expect(await account().balanceCents(user.id)).toBe(500 - Math.ceil((minutes * rate) / 100));
  });

  it('allowance first, then per started minute; settling is once under replays and concurrency', async () => {
    const user = await createFundedUser(t, 5);
    await subscribe(t, user, 'tiny');
    const a = ref();
    const first = await charges.authorizeCall(user.id, {
      ref: a,
      direction: 'outbound',
      number: '+14155550123',
      maxDurationSeconds: 600,
    });
    // 60 s from the plan; 540 s = 9 minutes at 140 → 12.6 → 13 cents held.
    expect(first).toMatchObject({ ok: true, allowanceSeconds: 60, maxDurationSeconds: 600, holdCents: 13 });
    // 150 s: 60 free, 90 paid = 2 started minutes = 2.8 → 3 cents. Eight settlements at once, then a replay.
    const settled = await Promise.all(Array.from({ length: 8 }, () => charges.settleCall(a, { seconds: 150 })));
    expect(new Set(settled.map((s) => JSON.stringify(s)))).toEqual(
      new Set([JSON.stringify({ seconds: 150, allowanceSeconds: 60, paidSeconds: 90, chargedCents: 3 })]),
    );
    expect(await charges.settleCall(a, { seconds: 9999 })).toEqual({
      seconds: 150,
      allowanceSeconds: 60,
      paidSeconds: 90,
      chargedCents: 3,
    });
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -13],
      ['release', 10],
    ]);
    let s = await state(user);
    expect(s.usage).toMatchObject({ calls_outbound: 1, seconds_outbound: 60 });
    expect(s.usageRaw).toMatchObject({ calls_outbound: 1, seconds_outbound: 150 });
    expect(s.balance.amount).toBe(4.97);

    // The plan's one call is used: the next is paid from its first second.
    const b = ref();
    expect(
      await charges.authorizeCall(user.id, {
        ref: b,
        direction: 'outbound',
        number: '+14155550123',
        maxDurationSeconds: 120,
      }),
    ).toMatchObject({ ok: true, allowanceSeconds: 0, holdCents: 3 });
    expect(await charges.settleCall(b, { seconds: 61 })).toEqual({
      seconds: 61,
      allowanceSeconds: 0,
      paidSeconds: 61,
      chargedCents: 3,
    });
    s = await state(user);
    expect(s.usageRaw).toMatchObject({ calls_outbound: 2, seconds_outbound: 211 });
    expect(s.balance.amount).toBe(4.94);
  });

  it('a plan alone (no balance) covers calls without any hold; two calls at once never share the same allowance seconds', async () => {
    const user = await createVerifiedUser(t);
    await subscribe(t, user, 'tiny');
    const [x, y] = [ref(), ref()];
    const results = await Promise.all(
      [x, y].map((r) =>
        charges.authorizeCall(user.id, {
          ref: r,
          direction: 'outbound',
          number: '+14155550123',
          maxDurationSeconds: 600,
        }),
      ),
    );
    // One gets the plan's 60 s (no money needed); the other finds neither allowance nor balance.
    expect(results.map((r) => (r.ok ? `ok:${r.allowanceSeconds}:${r.holdCents}` : r.reason)).sort()).toEqual([
      'insufficient_funds',
      'ok:60:0',
    ]);
    expect(await ledger(user.id)).toEqual([]);
    const won = results[0].ok ? x : y;
    // Longer than its allowance (the audio server overran): charged no more than its hold, i.e. nothing.
    expect(await charges.settleCall(won, { seconds: 90 })).toEqual({
      seconds: 90,
      allowanceSeconds: 60,
      paidSeconds: 30,
      chargedCents: 0,
    });
    expect(await ledger(user.id)).toEqual([]);
  });

  it('a call the audio server refuses, and one housekeeping ends as stalled, return their holds whole', async () => {
    const user = await createFundedUser(t, 5);
    const calls = t.services.calls.calls;
    const id = ref();
    expect(
      await charges.authorizeCall(user.id, { ref: id, direction: 'outbound', number: '+14155550123' }),
    ).toMatchObject({ ok: true, holdCents: 84 });
    const now = t.clock.now();
    const summary = JSON.stringify({
      to: '+14155550123',
      from: null,
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
    });
    await t.database.db
      .insertInto('call_sessions')
      .values({
        id,
        user_id: user.id,
        direction: 'outbound',
        status: 'in_progress',
        webhook_url: null,
        summary,
        provider_call_id: null,
        duration_seconds: null,
        finished_at: null,
        record_object_id: null,
        created_at: now - 3 * 3600_000,
        updated_at: now - 3 * 3600_000,
      })
      .execute();
    expect(await calls.failStalled()).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await charge(id))?.state === 'settled', 5000, 'stalled call settled');
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -84],
      ['refund', 84],
    ]);
    expect((await state(user)).usageRaw).toMatchObject({ calls_outbound: 0, seconds_outbound: 0 });
  });
});

describe('charges nobody settles', () => {
  it('a charge whose call was never recorded is closed by housekeeping after the longest call: hold back, slot free', async () => {
    const user = await createFundedUser(t, 5);
    const orphan = ref();
    expect(
      await charges.authorizeCall(user.id, {
        ref: orphan,
        direction: 'outbound',
        number: '+14155550123',
        maxDurationSeconds: 60,
      }),
    ).toMatchObject({ ok: true, holdCents: 2 });
    // Not yet: it could still be a call in progress.
    expect(await charges.closeOrphans(3 * 3600_000)).toBe(0);
    t.clock.advance(3 * 3600_000 + 1000);
    try {
      expect(await charges.closeOrphans(3 * 3600_000)).toBeGreaterThanOrEqual(1);
      expect(await charges.closeOrphans(3 * 3600_000)).toBe(0);
    } finally {
      t.clock.advance(-(3 * 3600_000 + 1000));
    }
    expect(await charge(orphan)).toMatchObject({ state: 'settled', seconds: 0, charged_cents: 0 });
    expect(await ledger(user.id)).toEqual([
      ['topup', 500],
      ['hold', -2],
      ['refund', 2],
    ]);
  });
});

describe('concurrent calls per user (CALL_CONCURRENCY_PER_USER = 2)', () => {
  it('six starts at once: exactly two are authorized, the rest 429 concurrency_limit; one ending frees a slot', async () => {
    const user = await createFundedUser(t, 5);
    const refs = Array.from({ length: 6 }, () => ref());
    const results = await Promise.all(
      refs.map((r) =>
        charges.authorizeCall(user.id, {
          ref: r,
          direction: 'outbound',
          number: '+14155550123',
          maxDurationSeconds: 60,
        }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(2);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(Array(4).fill('concurrency_limit'));
    // Over HTTP-facing start the refusal is a 429.
    await expect(t.services.calls.calls.start(user.id, assembledCall(), null)).rejects.toMatchObject({
      code: 'concurrency_limit',
      status: 429,
    });
    const ok = refs.filter((_, i) => results[i].ok);
    await charges.settleCall(ok[0], { seconds: 0 });
    expect(
      await charges.authorizeCall(user.id, {
        ref: ref(),
        direction: 'outbound',
        number: '+14155550123',
        maxDurationSeconds: 60,
      }),
    ).toMatchObject({ ok: true });
    // Holds were made only for the authorized calls, and the settled one returned whole.
    expect((await ledger(user.id)).filter(([reason]) => reason === 'hold')).toHaveLength(3);
    expect(await account().balanceCents(user.id)).toBe(500 - 2 * 2);
  });

  it('across two instances on one database, a plan that raises the limit to 4: exactly four of ten starts succeed', async () => {
    const second = await createTestApp({
      env,
      config: callConfig(),
      shareDatabaseWith: { dir: t.dir, pgSchema: t.pgSchema, secrets: t.secrets },
    });
    try {
      const user = await createVerifiedUser(t);
      await subscribe(t, user, 'team');
      const other = second.services.calls.charges!;
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? other : charges).authorizeCall(user.id, {
            ref: ref(),
            direction: 'outbound',
            number: '+14155550123',
            maxDurationSeconds: 60,
          }),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(4);
      expect(results.filter((r) => !r.ok && r.reason === 'concurrency_limit')).toHaveLength(6);
      expect(
        await t.database.db
          .selectFrom('call_charges')
          .select('ref')
          .where('user_id', '=', user.id)
          .where('state', '=', 'open')
          .execute(),
      ).toHaveLength(4);
    } finally {
      await second.close();
    }
  });
});

describe('inbound calls (the voice agent)', () => {
  it('are priced at the inbound rate of the number called, use the inbound allowance and are recorded as inbound', async () => {
    const user = await createFundedUser(t, 5);
    const r = ref();
    // GB inbound: 100 ten-thousandths a minute; 600 s → 10 minutes → 10 cents.
    expect(
      await charges.authorizeCall(user.id, {
        ref: r,
        direction: 'inbound',
        number: '+442071234567',
        maxDurationSeconds: 600,
      }),
    ).toMatchObject({ ok: true, country: 'GB', holdCents: 10 });
    expect(await charges.settleCall(r, { seconds: 61 })).toMatchObject({ chargedCents: 2 });
    expect((await state(user)).usageRaw).toMatchObject({ calls_inbound: 1, seconds_inbound: 61, calls_outbound: 0 });

    const { sessionId } = await t.services.calls.calls.start(
      user.id,
      assembledCall({ from: '+442071234567', to: '+14155550123' }),
      null,
      { direction: 'inbound' },
    );
    expect((await session(sessionId)).direction).toBe('inbound');
    expect(await charge(sessionId)).toMatchObject({ direction: 'inbound', country: 'GB', rate: 100 });
    // A refusal is a value the voice agent can speak: no balance, no plan.
    const broke = await createVerifiedUser(t);
    expect(
      await charges.authorizeCall(broke.id, { ref: ref(), direction: 'inbound', number: '+442071234567' }),
    ).toMatchObject({ ok: false, reason: 'insufficient_funds', message: expect.any(String) });
  });
});
