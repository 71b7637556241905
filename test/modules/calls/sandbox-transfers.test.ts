// Transfers through the sandbox carrier, end to end over loopback at real
// pace (issue 46, docs/decisions/calls.md "Transfers are billed legs"): the
// simulated caller asks for a person and the sandbox dialogue engine calls
// transfer_to_human. A priced human agent is dialled as Twilio dials: the
// `<Dial timeLimit>` redirect stops the stream, the person talks, and the
// carrier's signed status callback of the dialled leg settles the leg's
// charge from its duration, at the dialled rate plus the call's own. A human
// agent at an unpriced number (+882…) of an inbound configuration is never
// dialled: the agent says nobody can take the call and the call goes on; so
// with too little balance for the leg. The caller's own words stand in for
// recognition (STT_PROVIDER=none), so the dialogue is deterministic.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCostCents } from '../../../src/modules/calls/charges.js';
import { transferLegRef } from '../../../src/modules/calls/transfers.js';
import type { TestApp } from '../../support/app.js';
import { bearer } from '../../support/factories.js';
import { eventually } from '../events/support.js';
import { type Line, canSpeak, clinic, ended, placeCall, sandboxCarrierApp } from './sandbox-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await sandboxCarrierApp({ STT_PROVIDER: 'none', CALL_RECORDING: '0' });
}, 60_000);
afterAll(async () => {
  await t?.close();
}, 60_000);

const charge = (ref: string) =>
  t.database.db.selectFrom('call_charges').selectAll().where('ref', '=', ref).executeTakeFirst();
const SORRY = "I'm sorry, nobody is available to take your call right now.";
// The simulated caller speaks over one answer: the opening hours, so that the answer to its request is heard whole.
const ASKS_FOR_A_PERSON = [
  'Hello, who is this?',
  'Can you tell me your opening hours please?',
  'Can I speak to a person please?',
  'No thank you, goodbye.',
];

type ToolCall = { name: string; arguments: unknown; result: Record<string, unknown> };

/** The agent refused the transfer in speech and the call went on to its goodbye; nothing was dialled or held for a leg. */
async function expectRefusedTransfer(
  sessionId: string,
  view: { outcome: string; transcript: Line[]; toolCalls: ToolCall[] },
  message: RegExp,
) {
  expect(view.outcome, JSON.stringify(view.transcript)).toBe('completed');
  const transfer = view.toolCalls.find((call) => call.name === 'transfer_to_human');
  expect(transfer?.result, JSON.stringify(view.toolCalls)).toMatchObject({
    ok: false,
    message: expect.stringMatching(message),
  });
  expect(
    view.transcript.some((l) => l.role === 'agent' && l.text.includes(SORRY)),
    JSON.stringify(view.transcript),
  ).toBe(true);
  expect(view.transcript.some((l) => l.role === 'caller' && l.text === 'No thank you, goodbye.')).toBe(true);
  expect(await charge(transferLegRef(sessionId))).toBeUndefined();
}

describe.skipIf(!canSpeak).concurrent('transfers through the sandbox carrier', () => {
  it("a call that transfers is billed for its dialled leg from the carrier's signed duration, at the dialled rate plus its own", async () => {
    const c = await clinic(t);
    const sessionId = await placeCall(t, c, '+14155550123', {
      script: ASKS_FOR_A_PERSON,
      humanAgents: [{ name: 'Sam', phone: '+14155550111' }],
    });
    const view = await ended(t, c.user, sessionId, 120_000);
    expect(view, JSON.stringify(view.transcript)).toMatchObject({ status: 'completed', outcome: 'transferred' });
    expect(view.toolCalls.find((call: ToolCall) => call.name === 'transfer_to_human')?.result).toEqual({
      ok: true,
      name: 'Sam',
    });
    // The caller's part ends at the transfer: its goodbye was never said.
    expect((view.transcript as Line[]).some((l) => l.role === 'caller' && l.text === 'No thank you, goodbye.')).toBe(
      false,
    );
    // The parent is charged its own minutes; the leg (US 140 + the call's US 140 a minute) what the carrier says it lasted: 4 s.
    const ref = transferLegRef(sessionId);
    expect(await charge(ref)).toMatchObject({ direction: 'leg', rate: 280 });
    await eventually(
      async () => (await charge(ref))?.state === 'settled',
      30_000,
      'the dialled leg settled by its status callback',
    );
    expect(await charge(ref)).toMatchObject({
      state: 'settled',
      seconds: 4,
      charged_cents: callCostCents(4, 280),
      max_seconds: 3600,
    });
    expect(await charge(sessionId)).toMatchObject({ state: 'settled', seconds: view.durationSeconds });
  }, 150_000);

  it('a human agent at an unpriced number (+882…) of an inbound configuration is never dialled: the agent says so and the call goes on', async () => {
    const c = await clinic(t);
    const contact = await t.services.data.records.create(
      c.user.id,
      'contacts',
      Buffer.from(JSON.stringify({ name: 'Satellite desk', phone: '+88216123456' })),
    );
    const agent = await t.services.data.records.create(
      c.user.id,
      'agents',
      Buffer.from(
        JSON.stringify({
          name: 'Ava',
          firstMessage: 'Thanks for calling the clinic, this is Ava.',
          knowledgeBaseId: c.kbId,
        }),
      ),
    );
    const config = await t.app.inject({
      method: 'PUT',
      url: '/api/inbound-configurations',
      headers: bearer(c.user.token),
      payload: {
        name: 'Front desk',
        agent: { id: agent.id, type: 'agents' },
        source: { type: 'manual' },
        humanAgents: [{ id: contact.id, type: 'contacts' }],
      },
    });
    expect(config.statusCode, config.body).toBe(200);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/inbound-configurations/${config.json().id}`,
          headers: bearer(c.user.token),
          payload: { action: 'attach', phone_number_id: c.numberId },
        })
      ).statusCode,
    ).toBe(200);
    const rung = await t.app.inject({
      method: 'POST',
      url: '/api/sandbox/calls/inbound',
      headers: bearer(c.user.token),
      payload: { numberId: c.numberId, from: '+14155550177', script: ASKS_FOR_A_PERSON },
    });
    expect(rung.statusCode, rung.body).toBe(202);
    const { sessionId } = rung.json();
    await expectRefusedTransfer(sessionId, await ended(t, c.user, sessionId, 120_000), /cannot be called/);
  }, 150_000);

  it('with too little balance for a minute of the leg, the transfer is refused in speech and nothing is held for it', async () => {
    const c = await clinic(t);
    // $0.86: the call's hour at 140 holds 84 cents; 2 cents are less than a minute of the leg (280).
    const balance = await t.services.billing.account.balanceCents(c.user.id);
    await t.database.db
      .insertInto('credit_ledger')
      .values({
        user_id: c.user.id,
        cents: 86 - balance,
        reason: 'test_spend',
        ref: `test:${randomUUID()}`,
        created_at: Date.now(),
      })
      .execute();
    const sessionId = await placeCall(t, c, '+14155550123', {
      script: ASKS_FOR_A_PERSON,
      humanAgents: [{ name: 'Sam', phone: '+14155550111' }],
    });
    expect(await charge(sessionId)).toMatchObject({ hold_cents: 84 });
    await expectRefusedTransfer(sessionId, await ended(t, c.user, sessionId, 120_000), /cannot pay/);
  }, 150_000);
});
