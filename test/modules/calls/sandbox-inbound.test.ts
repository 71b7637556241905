// Sandbox inbound calls and the sandbox answering machine, end to end over
// loopback at real pace (DESIGN.md "Sandbox carrier"): POST
// /api/sandbox/calls/inbound rings a sandbox number attached to an inbound
// configuration; the carrier POSTs its signed voice webhook, follows the
// TwiML to the media WebSocket, and its caller speaks the default script,
// recognised by pocketsphinx; the sandbox dialogue engine answers the
// opening-hours question from the agent's knowledge base and books a meeting
// on the Tuesday asked for. The record and the two-channel recording are
// written. A number not attached, or an owner without money, is refused on
// the call. An outbound call with `script: "voicemail"` reaches an answering
// machine: the agent leaves its voicemail message after the beep and hangs up.
// The slow calls run concurrently (one app), so the file takes about as long
// as its longest call.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDay, requestedDate } from '../../../src/providers/language-model/sandbox.js';
import type { TestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { callRecords } from './support.js';
import {
  type Clinic,
  type Line,
  canSpeak,
  channelRms,
  clinic,
  ended,
  expectTwoVoiceRecording,
  placeCall,
  pocketsphinx,
  sandboxCarrierApp,
  sandboxNumber,
} from './sandbox-support.js';

let t: TestApp;
beforeAll(async () => {
  t = await sandboxCarrierApp();
}, 60_000);
afterAll(async () => {
  await t?.close();
}, 60_000);

/** An agent record in the clinic's `agents` store, answering calls to its number through an inbound configuration. */
async function frontDesk(c: Clinic, numberId = c.numberId) {
  const agent = await t.services.data.records.create(
    c.user.id,
    'agents',
    Buffer.from(
      JSON.stringify({
        name: 'Ava',
        firstMessage: 'Thanks for calling the clinic, this is Ava.',
        knowledgeBaseId: c.kbId,
        integrations: [c.integrationId],
      }),
    ),
  );
  const config = await t.app.inject({
    method: 'PUT',
    url: '/api/inbound-configurations',
    headers: bearer(c.user.token),
    payload: { name: 'Front desk', agent: { id: agent.id, type: 'agents' }, source: { type: 'manual' } },
  });
  expect(config.statusCode, config.body).toBe(200);
  const attach = await t.app.inject({
    method: 'POST',
    url: `/api/inbound-configurations/${config.json().id}`,
    headers: bearer(c.user.token),
    payload: { action: 'attach', phone_number_id: numberId },
  });
  expect(attach.statusCode, attach.body).toBe(200);
}

const ring = (token: string, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/api/sandbox/calls/inbound', headers: bearer(token), payload });

describe.skipIf(!canSpeak).concurrent('sandbox inbound calls and voicemail (no Twilio)', () => {
  it('rings a number attached to an inbound configuration: the caller is recognised, the agent answers from its knowledge base and books next Tuesday; record and two-channel recording written', async () => {
    const c = await clinic(t);
    await frontDesk(c);
    const res = await ring(c.user.token, { numberId: c.numberId, from: '+14155550177' });
    expect(res.statusCode, res.body).toBe(202);
    const { sessionId } = res.json();
    const view = await ended(t, c.user, sessionId, 150_000);
    expect(view).toMatchObject({
      id: sessionId,
      direction: 'inbound',
      status: 'completed',
      outcome: 'completed',
      from: '+14155550177',
      to: c.from,
    });

    const transcript = view.transcript as Line[];
    // The agent's first message (what the caller let it say: on a loaded machine a slow voice may pause long enough for the caller to go on; seen cut after "Thanks for").
    expect(transcript[0]).toMatchObject({ role: 'agent', text: expect.stringMatching(/^Thanks/) });
    expect('Thanks for calling the clinic, this is Ava.').toContain(transcript[0]!.text);
    const callerLines = transcript.filter((l) => l.role === 'caller' && l.text.trim());
    expect(callerLines.length).toBeGreaterThanOrEqual(3);
    if (pocketsphinx) for (const line of callerLines) expect(line.recognised, JSON.stringify(line)).not.toBe(false);
    // The opening hours, from the agent's knowledge base.
    const search = view.toolCalls.find((call: { name: string }) => call.name === 'search_knowledge');
    expect(JSON.stringify(search.result)).toContain('Monday to Friday');
    // The agent's answer to the question is the knowledge base's sentence (cut where the caller spoke over it, when it did).
    const question = transcript.findIndex((l) => l.role === 'caller' && /opening hours/i.test(l.text));
    const answer = transcript.slice(question + 1).find((l) => l.role === 'agent');
    expect(question, JSON.stringify(transcript)).toBeGreaterThan(0);
    expect(answer?.text, JSON.stringify(transcript)).toMatch(/^Opening hours/);
    expect('Opening hours: we are open Monday to Friday from nine to five.').toContain(answer!.text);
    // "I would like to book a meeting for next Tuesday.": that day's availability, a slot on it booked.
    const tuesday = requestedDate('next Tuesday', Date.now())!;
    const check = view.toolCalls.find((call: { name: string }) => call.name === 'check_availability');
    expect(check.arguments).toEqual({ date: tuesday });
    const booking = view.toolCalls.find((call: { name: string }) => call.name === 'book_meeting');
    expect(booking.result).toMatchObject({ booked: true });
    expect(String(booking.arguments.start).slice(0, 10)).toBe(tuesday);
    // The transcript names the day (the caller may speak over the rest on a loaded machine).
    expect(
      transcript.some((l) => l.role === 'agent' && l.text.includes(describeDay(tuesday))),
      JSON.stringify(transcript),
    ).toBe(true);

    // The encrypted record in the calls store, and the recording: caller left, agent right, speech on both.
    const records = await callRecords(t, c.user);
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          session_id: sessionId,
          direction: 'inbound',
          outcome: 'completed',
          from: '+14155550177',
          to: c.from,
        }),
      ]),
    );
    await expectTwoVoiceRecording(t, c.user, sessionId, view.recordingUrl);
  }, 180_000);

  it('an outbound call with script "voicemail" reaches an answering machine: after its beep the agent leaves the voicemail message once and hangs up (outcome voicemail)', async () => {
    const c = await clinic(t);
    const message = 'Hi Grace, this is Amy from the clinic. Please call us back.';
    const sessionId = await placeCall(t, c, '+14155550123', {
      script: 'voicemail',
      agent: { voicemailMessage: message },
    });
    const view = await ended(t, c.user, sessionId, 90_000);
    expect(view).toMatchObject({ direction: 'outbound', status: 'completed', outcome: 'voicemail' });
    const transcript = view.transcript as Line[];
    expect(transcript.filter((l) => l.role === 'agent' && l.text === message)).toHaveLength(1);
    // The voicemail message is the agent's last word; nothing was booked with a machine.
    expect(transcript.filter((l) => l.role === 'agent').at(-1)!.text).toBe(message);
    expect((view.toolCalls ?? []).map((call: { name: string }) => call.name)).not.toContain('book_meeting');
    // The machine's greeting and beep are on the recording's caller channel, the message on the agent's.
    const wav = await t.app.inject({ method: 'GET', url: view.recordingUrl, headers: bearer(c.user.token) });
    expect(wav.statusCode).toBe(200);
    expect(channelRms(wav.rawPayload, 0)).toBeGreaterThan(200);
    expect(channelRms(wav.rawPayload, 1)).toBeGreaterThan(200);
  }, 120_000);

  it('refuses on the call, as Twilio carries it, a number not attached and an owner without money: 202, then failed with its reason', async () => {
    const c = await clinic(t);
    const unattached = await ring(c.user.token, { numberId: c.numberId });
    expect(unattached.statusCode, unattached.body).toBe(202);
    const refused = await ended(t, c.user, unattached.json().sessionId, 20_000);
    expect(refused).toMatchObject({
      direction: 'inbound',
      status: 'failed',
      outcome: 'refused',
      reason: 'not_attached',
      from: '+12125550142',
      to: c.from,
    });
    expect(refused.transcript ?? []).toEqual([]);

    const poor = await clinic(t);
    await frontDesk(poor);
    await t.database.db
      .insertInto('credit_ledger')
      .values({
        user_id: poor.user.id,
        cents: -500,
        reason: 'test_spend',
        ref: `test:${randomUUID()}`,
        created_at: Date.now(),
      })
      .execute();
    const broke = await ring(poor.user.token, { numberId: poor.numberId, script: ['Hello?'] });
    expect(broke.statusCode, broke.body).toBe(202);
    expect(await ended(t, poor.user, broke.json().sessionId, 20_000)).toMatchObject({
      direction: 'inbound',
      status: 'failed',
      outcome: 'refused',
      reason: 'insufficient_funds',
    });
  }, 60_000);

  it('checks the request before any call: 404 for a number that is unknown or not yours, 409 for one Twilio carries, 400 for a bad script or caller', async () => {
    const c = await clinic(t);
    const other = await createFundedUser(t);
    expect((await ring(c.user.token, { numberId: randomUUID() })).statusCode).toBe(404);
    const foreign = await ring(other.token, { numberId: c.numberId });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'not_found' });
    const twilioNumber = await sandboxNumber(t, c.user);
    await t.database.db
      .updateTable('phone_numbers')
      .set({ provider: 'twilio' })
      .where('id', '=', twilioNumber)
      .execute();
    expect((await ring(c.user.token, { numberId: twilioNumber })).json()).toMatchObject({ code: 'conflict' });
    expect((await ring(c.user.token, { numberId: c.numberId, script: [] })).statusCode).toBe(400);
    expect((await ring(c.user.token, { numberId: c.numberId, script: 'shout' })).statusCode).toBe(400);
    expect((await ring(c.user.token, { numberId: c.numberId, from: '0123' })).statusCode).toBe(400);
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/sandbox/calls/inbound', payload: { numberId: c.numberId } }))
        .statusCode,
    ).toBe(401);
    // None of these rang: the user has no call session.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(c.user.token) })).json().calls,
    ).toEqual([]);
    // 60 s like its neighbours: CI runs this file beside the other real-time calls, whose load once stretched it past 30 s.
  }, 60_000);
});
