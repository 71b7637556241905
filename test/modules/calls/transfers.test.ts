// Transfers are billed legs (issue 46, docs/decisions/calls.md "Transfers are
// billed legs"), against billing's real ledger and the HTTP route Twilio
// calls: an unpriced human agent is never dialled and costs nothing; the leg
// is rated at the dialled number's outbound rate plus the parent call's and
// held for what the balance buys (refused without a minute of it); the
// carrier's signed final duration settles it once, per started minute up to
// its hold, also after the session ended (a replay charges once, a forged or
// foreign callback changes nothing); a leg never dialled is released, one
// whose callback never comes is settled at its maximum by housekeeping; and
// POST /api/session/call refuses an unpriced human agent before spending the
// payload's jti.
import { randomUUID } from 'node:crypto';
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCostCents } from '../../../src/modules/calls/charges.js';
import { transferLegRef } from '../../../src/modules/calls/transfers.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { type TwilioFake, startTwilioFake } from '../../support/twilio-fake.js';
import { callConfig } from './support.js';

let t: TestApp;
let fake: TwilioFake;
beforeAll(async () => {
  fake = await startTwilioFake();
  t = await createTestApp({
    env: { CALL_CONCURRENCY_PER_USER: '1', CALL_MAX_SECONDS: '3600' },
    config: {
      ...callConfig(),
      twilio: { accountSid: fake.accountSid, authToken: fake.authToken, from: fake.from, apiBase: fake.apiBase },
    },
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const legs = () => t.services.calls.transfers!;
const charges = () => t.services.calls.charges!;
const charge = (ref: string) =>
  t.database.db.selectFrom('call_charges').selectAll().where('ref', '=', ref).executeTakeFirst();
const ledger = async (userId: string) =>
  (
    await t.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', userId).orderBy('id').execute()
  ).map((r) => [r.reason, Number(r.cents)]);
const rate = (country: string) => t.services.billing.catalog.voiceRate(country, 'outbound')!;

/** Leaves the user `cents` of balance (a spend recorded straight in the ledger). */
async function spendDownTo(user: TestUser, cents: number) {
  const balance = await t.services.billing.account.balanceCents(user.id);
  await t.database.db
    .insertInto('credit_ledger')
    .values({
      user_id: user.id,
      cents: cents - balance,
      reason: 'test_spend',
      ref: `test:${randomUUID()}`,
      created_at: Date.now(),
    })
    .execute();
}

/** An outbound call of the user, authorized (its charge open) and recorded as carried by Twilio's call `callSid`. */
async function parentCall(user: TestUser, options: { maxDurationSeconds?: number; status?: string } = {}) {
  const id = randomUUID();
  const callSid = `CA${randomUUID().replace(/-/g, '')}`;
  const authorized = await charges().authorizeCall(user.id, {
    ref: id,
    direction: 'outbound',
    number: '+14155550123',
    maxDurationSeconds: options.maxDurationSeconds ?? 600,
  });
  expect(authorized, JSON.stringify(authorized)).toMatchObject({ ok: true });
  const now = t.clock.now();
  const summary = JSON.stringify({
    to: '+14155550123',
    from: '+14155550100',
    agent: { name: 'Amy' },
    contact: { name: 'Grace' },
  });
  await t.database.db
    .insertInto('call_sessions')
    .values({
      id,
      user_id: user.id,
      direction: 'outbound',
      status: options.status ?? 'in_progress',
      webhook_url: null,
      summary,
      provider_call_id: callSid,
      duration_seconds: null,
      finished_at: null,
      record_object_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { id, callSid };
}

/** POSTs the dialled leg's status callback as Twilio signs it (or with `signature`), through the app. */
async function dialCallback(sessionId: string, params: Record<string, string>, signature?: string) {
  const path = `/api/webhooks/twilio/dial/${sessionId}`;
  const body = {
    AccountSid: fake.accountSid,
    CallSid: `CA${randomUUID().replace(/-/g, '')}`,
    Direction: 'outbound-dial',
    ...params,
  };
  const signed = signature ?? twilio.getExpectedTwilioSignature(fake.authToken, `${t.config.publicUrl}${path}`, body);
  return t.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signed },
    payload: new URLSearchParams(body).toString(),
  });
}

describe('a transfer is an outbound leg that must be priced and paid for', () => {
  it('a human agent at an unpriced number (+882…) is refused: nothing held, nothing dialled', async () => {
    const user = await createFundedUser(t, 5);
    const parent = await parentCall(user);
    const before = await ledger(user.id);
    const refused = await legs().authorizeTransfer(user.id, parent.id, '+88216123456');
    expect(refused).toEqual({
      ok: false,
      reason: 'unsupported_destination',
      message: expect.stringContaining('cannot be called'),
    });
    expect(await charge(transferLegRef(parent.id))).toBeUndefined();
    expect(await ledger(user.id)).toEqual(before);
    expect(legs().dialable('+88216123456')).toBe(false);
    expect(legs().dialable('+14155550111')).toBe(true);
  });

  it("is rated at the dialled number's outbound rate plus the parent's, takes over the parent's concurrency slot, and is held for what the balance buys", async () => {
    const user = await createFundedUser(t, 5);
    const parent = await parentCall(user, { maxDurationSeconds: 600 });
    // Five dollars less the parent's hold (10 minutes at 140: 14 cents).
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(486);
    const legRate = rate('GB') + rate('US');
    const authorized = await legs().authorizeTransfer(user.id, parent.id, '+442079460111');
    expect(authorized.ok).toBe(true);
    if (!authorized.ok) return;
    const minutes = Math.min(60, Math.floor((486 * 100) / legRate));
    expect(authorized.leg).toMatchObject({
      ref: transferLegRef(parent.id),
      maxDurationSeconds: minutes * 60,
      holdCents: callCostCents(minutes * 60, legRate),
      ratePerMinute: legRate / 10_000,
    });
    expect(authorized.leg.dial).toEqual({
      phone: '+442079460111',
      timeLimitSeconds: minutes * 60,
      statusCallbackUrl: `${t.config.publicUrl}/api/webhooks/twilio/dial/${parent.id}`,
    });
    expect(await charge(transferLegRef(parent.id))).toMatchObject({
      state: 'open',
      direction: 'leg',
      country: 'GB',
      rate: legRate,
      allowance_seconds: 0,
      allowance_call: 0,
    });
    // CALL_CONCURRENCY_PER_USER=1: the leg took over the parent's slot; no other call starts while it runs.
    expect(
      await charges().authorizeCall(user.id, { ref: randomUUID(), direction: 'outbound', number: '+14155550123' }),
    ).toMatchObject({ ok: false, reason: 'concurrency_limit' });
    // Asked for twice on one call: one leg per call (the runner keeps the first).
    expect(await legs().authorizeTransfer(user.id, parent.id, '+442079460111')).toMatchObject({ ok: false });
    expect(
      await t.database.db.selectFrom('call_charges').select('ref').where('user_id', '=', user.id).execute(),
    ).toHaveLength(2);
  });

  it('without a minute of balance left for the leg, the transfer is refused (insufficient_funds), nothing held', async () => {
    const user = await createFundedUser(t, 5);
    // 2 cents hold the parent's one minute; 1 cent is left, less than a minute of the leg (140 + 140 a minute).
    await spendDownTo(user, 3);
    const parent = await parentCall(user, { maxDurationSeconds: 60 });
    const before = await ledger(user.id);
    expect(await legs().authorizeTransfer(user.id, parent.id, '+14155550111')).toEqual({
      ok: false,
      reason: 'insufficient_funds',
      message: expect.stringContaining('cannot pay'),
    });
    expect(await charge(transferLegRef(parent.id))).toBeUndefined();
    expect(await ledger(user.id)).toEqual(before);
  });
});

describe("the carrier's final duration of the dialled leg settles it", () => {
  it('a completed leg of 3600 s is charged per started minute up to its hold, once; forged, foreign and early callbacks change nothing; also after the session ended', async () => {
    const user = await createFundedUser(t, 5);
    // The balance pays for 10 minutes of the leg (140 + 140 a minute: 28 cents) after the parent's 2-cent hold.
    await spendDownTo(user, 30);
    const parent = await parentCall(user, { maxDurationSeconds: 60 });
    const authorized = await legs().authorizeTransfer(user.id, parent.id, '+14155550111');
    expect(authorized).toMatchObject({ ok: true, leg: { maxDurationSeconds: 600, holdCents: 28 } });
    // The parent's session ends at the transfer (its stream closed): its own minutes stop there.
    expect(await charges().settleCall(parent.id, { seconds: 45 })).toMatchObject({ chargedCents: 2 });
    await t.database.db
      .updateTable('call_sessions')
      .set({ status: 'completed', duration_seconds: 45, finished_at: t.clock.now() })
      .where('id', '=', parent.id)
      .execute();
    const ref = transferLegRef(parent.id);

    const final = {
      ParentCallSid: parent.callSid,
      CallStatus: 'completed',
      CallDuration: '3600',
      To: '+14155550111',
      From: '+14155550100',
    };
    // A forged signature, another call's leg, a status that is not final: 400 / 400 / 204, the leg still open.
    expect((await dialCallback(parent.id, final, 'bm90IGEgc2lnbmF0dXJl')).statusCode).toBe(400);
    expect((await dialCallback(parent.id, { ...final, ParentCallSid: 'CAsomeoneelse' })).statusCode).toBe(400);
    expect((await dialCallback(parent.id, { ...final, CallStatus: 'in-progress' })).statusCode).toBe(204);
    expect((await dialCallback(parent.id, { ...final, CallDuration: 'soon' })).statusCode).toBe(400);
    expect(await charge(ref)).toMatchObject({ state: 'open' });

    // The real one, then Twilio's retries of it: charged once, never more than the hold.
    const first = await dialCallback(parent.id, final);
    expect(first.statusCode, first.body).toBe(204);
    expect(callCostCents(3600, 280)).toBeGreaterThan(28);
    expect(await charge(ref)).toMatchObject({ state: 'settled', seconds: 3600, charged_cents: 28 });
    for (let i = 0; i < 3; i++)
      expect((await dialCallback(parent.id, { ...final, CallDuration: '10' })).statusCode).toBe(204);
    expect(await charge(ref)).toMatchObject({ state: 'settled', seconds: 3600, charged_cents: 28 });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(0);
    // The call's cost includes its leg.
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/calls/${parent.id}`, headers: bearer(user.token) })).json(),
    ).toMatchObject({ id: parent.id, costUsd: 0.3 });
    // A leg is not a call of the plan: no usage recorded for it.
    const usage = (await t.app.inject({ method: 'GET', url: '/api/billing/state', headers: bearer(user.token) })).json()
      .usageRaw;
    expect(usage).toMatchObject({ calls_outbound: 1, seconds_outbound: 45 });
    // A session without a leg, or unknown: 404.
    const other = await parentCall(await createFundedUser(t, 5));
    expect((await dialCallback(other.id, { ...final, ParentCallSid: other.callSid })).statusCode).toBe(404);
    expect((await dialCallback(randomUUID(), final)).statusCode).toBe(404);
  });

  it('a short leg costs its started minutes; a busy one nothing', async () => {
    const user = await createFundedUser(t, 5);
    const a = await parentCall(user, { maxDurationSeconds: 60 });
    expect((await legs().authorizeTransfer(user.id, a.id, '+14155550111')).ok).toBe(true);
    await charges().settleCall(a.id, { seconds: 20 });
    expect(
      (await dialCallback(a.id, { ParentCallSid: a.callSid, CallStatus: 'completed', CallDuration: '61' })).statusCode,
    ).toBe(204);
    expect(await charge(transferLegRef(a.id))).toMatchObject({
      state: 'settled',
      seconds: 61,
      charged_cents: callCostCents(61, 280),
    });
    const b = await parentCall(user, { maxDurationSeconds: 60 });
    expect((await legs().authorizeTransfer(user.id, b.id, '+14155550111')).ok).toBe(true);
    expect((await dialCallback(b.id, { ParentCallSid: b.callSid, CallStatus: 'busy' })).statusCode).toBe(204);
    expect(await charge(transferLegRef(b.id))).toMatchObject({ state: 'settled', seconds: 0, charged_cents: 0 });
  });
});

describe('legs nobody reports', () => {
  it('a leg never dialled is released whole (also when the process stopped before the redirect); a dialled one whose callback never comes is settled at its authorized maximum by housekeeping', async () => {
    const user = await createFundedUser(t, 5);
    const a = await parentCall(user, { maxDurationSeconds: 60 });
    const released = await legs().authorizeTransfer(user.id, a.id, '+14155550111');
    if (!released.ok) throw new Error(released.message);
    await legs().release(released.leg);
    expect(await charge(transferLegRef(a.id))).toMatchObject({ state: 'settled', seconds: 0, charged_cents: 0 });
    await charges().settleCall(a.id, { seconds: 30 });

    const b = await parentCall(user, { maxDurationSeconds: 60 });
    const lost = await legs().authorizeTransfer(user.id, b.id, '+14155550111');
    if (!lost.ok) throw new Error(lost.message);
    await legs().markDialled(b.id);
    await charges().settleCall(b.id, { seconds: 30 });
    // Authorized, then the process stopped before the redirect: never dialled, so nothing is charged for it.
    const other = await createFundedUser(t, 5);
    const c = await parentCall(other, { maxDurationSeconds: 60 });
    const cut = await legs().authorizeTransfer(other.id, c.id, '+14155550111');
    if (!cut.ok) throw new Error(cut.message);
    await charges().settleCall(c.id, { seconds: 30 });
    // Not before the longest leg could have ended (and its callback come).
    const sweepAfter = 2 * 3600_000 + 3600_000;
    expect(await charges().closeOrphans(sweepAfter)).toBe(0);
    t.clock.advance(sweepAfter + 1000);
    try {
      expect(await charges().closeOrphans(sweepAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      t.clock.advance(-(sweepAfter + 1000));
    }
    expect(await charge(transferLegRef(b.id))).toMatchObject({
      state: 'settled',
      seconds: lost.leg.maxDurationSeconds,
      charged_cents: lost.leg.holdCents,
    });
    expect(await charge(transferLegRef(c.id))).toMatchObject({ state: 'settled', seconds: 0, charged_cents: 0 });
  });
});

describe('POST /api/session/call', () => {
  it('refuses a human agent at an unpriced number with 400 unsupported_destination, before the jti is spent', async () => {
    const user = await createFundedUser(t, 5);
    const server = await registerServer(t, user);
    const jwt = await signPayload(server, {
      agent: { name: 'Amy' },
      contact: { name: 'Grace', phone: '+14155550123' },
      humanAgents: [
        { name: 'Sam', phone: '+14155550111' },
        { name: 'Satellite', phone: '+88216123456' },
      ],
      type: 'prompt',
      prompt: 'Confirm the appointment.',
    });
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/session/call',
        headers: bearer(user.token),
        payload: { server: server.name, jwt },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        code: 'unsupported_destination',
        message: expect.stringContaining('Satellite'),
      });
    }
    expect(
      await t.database.db.selectFrom('call_sessions').select('id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
  });
});
