// The built-in voice agent end to end, the test playing Twilio: a signed call
// session is placed through Calls.json (the Twilio fake), the test connects to
// the stream URL of the TwiML with its token, speaks real μ-law speech, and
// gets the agent's greeting, an answer made through the Deepgram fake and the
// OpenAI-compatible fake (with one search_knowledge tool call), and a `clear`
// when it speaks over the agent; the call ends completed with its record.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { OfflineCallerVoice } from '../../../src/providers/call-speech/offline-caller.js';
import type { TestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { type DeepgramFake, startDeepgramFake } from '../../support/deepgram-fake.js';
import { loggedEventErrors } from '../../support/event-schemas.js';
import { multipartForm } from '../../support/multipart.js';
import { type OpenAiFake, startOpenAiFake, textAnswer, toolCallAnswer } from '../../support/openai-fake.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { type TwilioFake, startTwilioFake } from '../../support/twilio-fake.js';
import { FakeTwilioCall, quiet, twilioNumber } from '../../support/twilio-media.js';
import { callCostCents } from '../../../src/modules/calls/charges.js';
import { twilioVoiceApp } from './voice-app.js';

const voice = OfflineCallerVoice.create();

let t: TestApp;
let twilio: TwilioFake;
let deepgram: DeepgramFake;
let openai: OpenAiFake;
let publicUrl: string;

beforeAll(async () => {
  [twilio, deepgram, openai] = await Promise.all([startTwilioFake(), startDeepgramFake(), startOpenAiFake()]);
  ({ t, publicUrl } = await twilioVoiceApp({ twilio, deepgram, openai }));
}, 60_000);
// The fakes' scripts are queues shared by the tests of this file: what one test leaves (a reply its call
// ended before asking for) must not answer the next test's call. (It did: the inbound call's first answer was
// the outbound call's leftover "Of course, go ahead.", over before the barge-in it was meant to carry.)
beforeEach(() => {
  openai.chatScripts.splice(0);
  deepgram.transcripts.splice(0);
});
afterAll(async () => {
  await t?.close();
  await Promise.all([twilio?.close(), deepgram?.close(), openai?.close()]);
});

/**
 * Waits until the reply to the caller's question is being heard: the model's second request of the turn (after its
 * tool call) was made, and 50 frames (1 s) have been sent since then and since `floor`.
 */
async function hearingLongAnswer(call: FakeTwilioCall, chatsBefore: number, floor: number): Promise<void> {
  await vi.waitFor(() => expect(openai.chats.length).toBe(chatsBefore + 2), { timeout: 30_000, interval: 50 });
  const answerFrames = call.agentFrames;
  await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(Math.max(floor, answerFrames) + 50), {
    timeout: 30_000,
    interval: 50,
  });
}

/** Waits until the agent stopped its audio (a `clear`); the failure says how far the reply had got. */
async function cleared(call: FakeTwilioCall, chatsBefore: number): Promise<void> {
  await vi.waitFor(
    () =>
      expect(
        call.events('clear').length,
        `agent frames ${call.agentFrames}, model requests ${openai.chats.length - chatsBefore}`,
      ).toBeGreaterThan(0),
    { timeout: 20_000, interval: 50 },
  );
}

describe.skipIf(!voice)('the built-in voice agent (Twilio Media Streams)', () => {
  it('places an outbound call, greets, answers through STT and the model with a tool call, clears on barge-in, and records the call', async () => {
    const user = await createFundedUser(t);
    const server = await registerServer(t, user);
    const numberId = await twilioNumber(t, twilio, user);
    const kb = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'Clinic' },
      })
    ).json();
    const form = multipartForm([
      {
        filename: 'hours.txt',
        content: 'Opening hours: we are open Monday to Friday from nine to five.',
        contentType: 'text/plain',
      },
    ]);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${kb.id}`,
          headers: { ...bearer(user.token), ...form.headers },
          payload: form.payload,
        })
      ).statusCode,
    ).toBe(200);

    deepgram.transcripts.push('What are your opening hours?', 'Wait, one more thing.');
    openai.chatScripts.push(
      { events: toolCallAnswer([{ id: 'call_1', name: 'search_knowledge', arguments: '{"query":"opening hours"}' }]) },
      {
        events: textAnswer(
          'We are open Monday to Friday from nine to five. We look forward to seeing you at the clinic any weekday.',
        ),
      },
      { events: textAnswer('Of course, go ahead.') },
    );
    const jwt = await signPayload(server, {
      agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'prompt',
      prompt: 'Answer questions about the clinic.',
      knowledgeBase: { id: kb.id },
      phoneNumberId: numberId,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode, res.body).toBe(204);
    const sessionId = res.headers['x-session-id'] as string;

    // Calls.json: from the user's number, TwiML connecting a stream with a token, progress and machine-detection callbacks.
    const placed = twilio.calls.at(-1)!;
    expect(placed).toMatchObject({
      from: '+14155550100',
      to: '+14155550123',
      statusCallback: `${publicUrl}/api/webhooks/twilio/call/${sessionId}`,
      amdCallback: `${publicUrl}/api/webhooks/twilio/amd/${sessionId}`,
      machineDetection: 'DetectMessageEnd',
    });
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml);
    expect(stream?.[1]).toBe(`ws://127.0.0.1:${new URL(publicUrl).port}/api/media/twilio`);

    // Twilio's ringing callback, signed as Twilio signs.
    expect(
      (
        await twilio.postSigned(placed.statusCallback!, {
          CallSid: placed.sid,
          CallStatus: 'ringing',
          AccountSid: twilio.accountSid,
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await twilio.postSigned(placed.statusCallback!, {
          CallSid: 'CAother',
          CallStatus: 'ringing',
          AccountSid: twilio.accountSid,
        })
      ).status,
    ).toBe(400);

    const call = new FakeTwilioCall(stream![1]!, stream![2]!, placed.sid, twilio.accountSid);
    await call.open();
    // The greeting: more than a second of speech with marks between its chunks, then quiet.
    await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(50), { timeout: 20_000, interval: 50 });
    expect(call.events('mark').length).toBeGreaterThan(0);
    await quiet(call);
    const greetingFrames = call.agentFrames;

    // Synthesized now, ready to speak over the long answer below (see the inbound test).
    const interruption = voice!.speak('Wait, one more thing.', AbortSignal.timeout(30_000));
    const chatsBefore = openai.chats.length;
    await call.speak(await voice!.speak('What are your opening hours?', AbortSignal.timeout(15_000)));
    await hearingLongAnswer(call, chatsBefore, greetingFrames);
    expect(openai.chats[chatsBefore]!.body.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'search_knowledge' }) }),
      ]),
    );
    // Only the tools this call can use: a knowledge base, no calendar, nobody to transfer to (opt_out: an outbound call).
    expect(
      (openai.chats[chatsBefore]!.body.tools as Array<{ function: { name: string } }>).map(
        (tool) => tool.function.name,
      ),
    ).toEqual(['search_knowledge', 'opt_out', 'end_call']);

    // The caller speaks over the long answer: the agent stops (clear).
    await call.speak(await interruption, 1500);
    await cleared(call, chatsBefore);
    // The words spoken over the answer are the caller's next turn: the agent answers them.
    await vi.waitFor(() => expect(openai.chats.length).toBe(chatsBefore + 3), { timeout: 20_000, interval: 50 });
    expect((openai.chats.at(-1)!.body.messages as unknown[]).at(-1)).toMatchObject({
      role: 'user',
      content: 'Wait, one more thing.',
    });

    call.send({
      event: 'stop',
      streamSid: call.streamSid,
      stop: { accountSid: twilio.accountSid, callSid: placed.sid },
    });
    await vi.waitFor(
      async () => {
        const view = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
        ).json();
        expect(view).toMatchObject({
          id: sessionId,
          direction: 'outbound',
          status: 'completed',
          outcome: 'completed',
          from: '+14155550100',
          to: '+14155550123',
        });
        expect(view.transcript.length).toBeGreaterThanOrEqual(3);
      },
      { timeout: 30_000, interval: 50 },
    );
    const view = (
      await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
    ).json();
    expect(view.transcript[0]).toMatchObject({ role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' });
    expect(view.transcript).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'caller', text: 'What are your opening hours?' })]),
    );
    expect(view.transcript).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'agent', interrupted: true })]),
    );
    expect(view.toolCalls).toEqual([
      expect.objectContaining({
        name: 'search_knowledge',
        arguments: { query: 'opening hours' },
        result: { matches: [expect.objectContaining({ text: expect.stringContaining('Monday to Friday') })] },
      }),
    ]);
    // Every event the call produced (call_status, call_transcript, …) is as the document publishes it.
    const logged = await loggedEventErrors(t.database.db, user.id);
    expect(logged.types).toEqual(expect.arrayContaining(['call_status', 'call_transcript']));
    expect(logged.errors).toEqual([]);
    const answer = view.transcript.find((l: { role: string; latency?: unknown }) => l.role === 'agent' && l.latency);
    expect(answer.latency).toMatchObject({ totalMs: expect.any(Number), overheadMs: expect.any(Number) });
    // The same latencies reach /metrics, per stage.
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(
      Number(/^voice_turn_latency_seconds_count\{stage="total"\} (\d+)/m.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(1);
    expect(metrics).toMatch(/^voice_turn_latency_seconds_count\{stage="overhead"\} [1-9]/m);
    // Every agent frame sent is counted in the outgoing pacing histogram.
    expect(Number(/^voice_frame_lateness_seconds_count (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(10);

    // The recording: two channels, the caller's speech on the left and the agent's on the right.
    expect(view.recordingUrl).toBe(`/api/calls/${sessionId}/recording`);
    const wav = await t.app.inject({ method: 'GET', url: view.recordingUrl, headers: bearer(user.token) });
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(wav.rawPayload.readUInt16LE(22)).toBe(2);
    expect(wav.rawPayload.length).toBeGreaterThan(8000 * 4 * 3);

    // The token was single use: a second connection is closed with 1008.
    const again = new WebSocket(stream![1]!);
    await new Promise<void>((resolve) => again.once('open', () => resolve()));
    again.send(
      JSON.stringify({
        event: 'start',
        sequenceNumber: '1',
        streamSid: 'MZx',
        start: {
          streamSid: 'MZx',
          callSid: placed.sid,
          accountSid: twilio.accountSid,
          customParameters: { token: stream![2]! },
          tracks: ['inbound'],
        },
      }),
    );
    const code = await new Promise<number>((resolve) => again.once('close', (c) => resolve(c)));
    expect(code).toBe(1008);
  }, 120_000);

  it('answers a call to a number attached to an inbound configuration with the agent of its record, and refuses what it must', async () => {
    const user = await createFundedUser(t);
    const phone = `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`;
    const numberId = await twilioNumber(t, twilio, user, phone);
    const agent = await t.services.data.records.create(
      user.id,
      'agents',
      Buffer.from(
        JSON.stringify({
          name: 'Ava',
          firstMessage: 'Thanks for calling the clinic, this is Ava.',
          instructions: 'Be brief.',
        }),
      ),
    );
    const kb = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(user.token),
        payload: { name: 'Clinic' },
      })
    ).json();
    const form = multipartForm([
      {
        filename: 'parking.txt',
        content: 'Parking: free parking is behind the clinic, entrance on Elm Street.',
        contentType: 'text/plain',
      },
    ]);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/knowledge-bases/${kb.id}`,
          headers: { ...bearer(user.token), ...form.headers },
          payload: form.payload,
        })
      ).statusCode,
    ).toBe(200);
    const config = await t.app.inject({
      method: 'PUT',
      url: '/api/inbound-configurations',
      headers: bearer(user.token),
      payload: {
        name: 'Front desk',
        agent: { id: agent.id, type: 'agents' },
        source: { type: 'manual' },
        knowledge_base_id: kb.id,
      },
    });
    expect(config.statusCode, config.body).toBe(200);
    const voiceUrl = `${publicUrl}/api/webhooks/twilio/voice/${numberId}`;
    const inboundCall = (sid: string) => ({
      CallSid: sid,
      AccountSid: twilio.accountSid,
      From: '+14155550177',
      To: phone,
      CallStatus: 'ringing',
      Direction: 'inbound',
    });

    // Not attached yet: one spoken sentence, a hang-up, and a failed session with its reason.
    const refused = await twilio.postSigned(voiceUrl, inboundCall('CArefused'));
    expect(refused.status).toBe(200);
    expect(refused.body).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    await vi.waitFor(
      async () => {
        const list = (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json();
        expect(list.calls[0]).toMatchObject({
          direction: 'inbound',
          status: 'failed',
          outcome: 'refused',
          reason: 'not_attached',
          to: phone,
        });
      },
      { timeout: 10_000, interval: 50 },
    );
    // A forged webhook changes nothing.
    const forged = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/twilio/voice/${numberId}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'bm90IGEgc2lnbmF0dXJl' },
      payload: new URLSearchParams(inboundCall('CAforged')).toString(),
    });
    expect(forged.statusCode).toBe(400);

    const attach = await t.app.inject({
      method: 'POST',
      url: `/api/inbound-configurations/${config.json().id}`,
      headers: bearer(user.token),
      payload: { action: 'attach', phone_number_id: numberId },
    });
    expect(attach.statusCode, attach.body).toBe(200);
    const answered = await twilio.postSigned(voiceUrl, inboundCall('CAanswered'));
    expect(answered.status).toBe(200);
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(answered.body);
    expect(stream, answered.body).not.toBeNull();
    openai.chatScripts.push(
      { events: toolCallAnswer([{ id: 'call_in', name: 'search_knowledge', arguments: '{"query":"parking"}' }]) },
      {
        events: textAnswer(
          'There is free parking behind the clinic, with the entrance on Elm Street. You will see the signs as soon as you turn in from the main road. If that is full, the town car park on Station Road is a short walk away, and the first two hours there are free as well. Please bring your ticket to the desk so that we can stamp it for you.',
        ),
      },
      { events: textAnswer('You are welcome. Goodbye!') },
    );
    deepgram.transcripts.push('Where can I park?', 'Thank you, that is all.');
    const call = new FakeTwilioCall(stream![1]!, stream![2]!, 'CAanswered', twilio.accountSid);
    await call.open();
    await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(50), { timeout: 20_000, interval: 50 });
    await quiet(call);
    const greeting = call.agentFrames;
    // Synthesized now, so that it is ready while the long answer plays (on a loaded CI, synthesizing it after the
    // answer began once took longer than the rest of the answer: nothing was left to cut).
    const thanks = voice!.speak('Thank you, that is all.', AbortSignal.timeout(30_000));
    const chatsBefore = openai.chats.length;
    await call.speak(await voice!.speak('Where can I park?', AbortSignal.timeout(15_000)));
    await hearingLongAnswer(call, chatsBefore, greeting);
    // Spoken over the long answer (long, so that on a loaded CI the barge-in still lands inside it): the agent stops.
    await call.speak(await thanks);
    await cleared(call, chatsBefore);
    await quiet(call);
    call.send({
      event: 'stop',
      streamSid: call.streamSid,
      stop: { accountSid: twilio.accountSid, callSid: 'CAanswered' },
    });
    await vi.waitFor(
      async () => {
        const list = (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json();
        expect(list.calls[0]).toMatchObject({
          direction: 'inbound',
          status: 'completed',
          outcome: 'completed',
          from: '+14155550177',
          to: phone,
        });
        const one = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${list.calls[0].id}`, headers: bearer(user.token) })
        ).json();
        expect(one.transcript?.length).toBeGreaterThan(1);
      },
      { timeout: 20_000, interval: 50 },
    );
    const latest = (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json()
      .calls[0];
    const view = (
      await t.app.inject({ method: 'GET', url: `/api/calls/${latest.id}`, headers: bearer(user.token) })
    ).json();
    expect(view.transcript[0]).toMatchObject({ role: 'agent', text: 'Thanks for calling the clinic, this is Ava.' });
    expect(view.transcript).toEqual(
      expect.arrayContaining([expect.objectContaining({ role: 'caller', text: 'Thank you, that is all.' })]),
    );
    // The call's last model request (the post-call analysis's come after it).
    const lastTurn = openai.chats.filter(
      (c) =>
        !(c.body.tools as Array<{ function: { name: string } }> | undefined)?.some(
          (tool) => tool.function.name === 'record_call_analysis',
        ),
    );
    expect(lastTurn.at(-1)!.body.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'system', content: expect.stringContaining('Be brief.') }),
      ]),
    );
    expect(view.toolCalls).toEqual([
      expect.objectContaining({
        name: 'search_knowledge',
        arguments: { query: 'parking' },
        result: { matches: [expect.objectContaining({ text: expect.stringContaining('Elm Street') })] },
      }),
    ]);

    // An owner without money is refused in speech too.
    const poor = await createFundedUser(t, 5);
    const poorNumber = await twilioNumber(
      t,
      twilio,
      poor,
      `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`,
    );
    const poorAgent = await t.services.data.records.create(
      poor.id,
      'agents',
      Buffer.from(JSON.stringify({ name: 'Bo' })),
    );
    const poorConfig = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/inbound-configurations',
        headers: bearer(poor.token),
        payload: { name: 'Desk', agent: { id: poorAgent.id, type: 'agents' }, source: { type: 'manual' } },
      })
    ).json();
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/api/inbound-configurations/${poorConfig.id}`,
          headers: bearer(poor.token),
          payload: { action: 'attach', phone_number_id: poorNumber },
        })
      ).statusCode,
    ).toBe(200);
    await t.database.db
      .insertInto('credit_ledger')
      .values({
        user_id: poor.id,
        cents: -500,
        reason: 'test_spend',
        ref: `test:${randomUUID()}`,
        created_at: Date.now(),
      })
      .execute();
    const broke = await twilio.postSigned(
      `${publicUrl}/api/webhooks/twilio/voice/${poorNumber}`,
      inboundCall('CAbroke'),
    );
    expect(broke.body).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    await vi.waitFor(
      async () => {
        const list = (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(poor.token) })).json();
        expect(list.calls[0]).toMatchObject({
          direction: 'inbound',
          status: 'failed',
          outcome: 'refused',
          reason: 'insufficient_funds',
        });
      },
      { timeout: 10_000, interval: 50 },
    );
  }, 120_000);

  it("transfers to a human agent as a billed leg: <Dial timeLimit> of what the balance buys, and Twilio's later duration of the dialled leg settles it once", async () => {
    const user = await createFundedUser(t);
    // $1 left: the call's hour holds 84 cents (140 a minute); 16 cents buy 5 minutes of the leg (140 + 140 a minute).
    const balance = await t.services.billing.account.balanceCents(user.id);
    await t.database.db
      .insertInto('credit_ledger')
      .values({
        user_id: user.id,
        cents: 100 - balance,
        reason: 'test_spend',
        ref: `test:${randomUUID()}`,
        created_at: Date.now(),
      })
      .execute();
    const server = await registerServer(t, user);
    const numberId = await twilioNumber(t, twilio, user, `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`);
    deepgram.transcripts.push('Can I speak to a person?');
    openai.chatScripts.push(
      {
        events: toolCallAnswer([
          { id: 'call_transfer', name: 'transfer_to_human', arguments: '{"humanAgentId":"human-1"}' },
        ]),
      },
      { events: textAnswer('Of course, I am putting you through to Sam now.') },
    );
    const jwt = await signPayload(server, {
      agent: { name: 'Amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
      contact: { name: 'Grace', phone: '+14155550123' },
      humanAgents: [{ name: 'Sam', phone: '+14155550111' }],
      type: 'prompt',
      prompt: 'Put the contact through to Sam when asked.',
      phoneNumberId: numberId,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode, res.body).toBe(204);
    const sessionId = res.headers['x-session-id'] as string;
    const placed = twilio.calls.at(-1)!;
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml)!;
    const call = new FakeTwilioCall(stream[1]!, stream[2]!, placed.sid, twilio.accountSid);
    await call.open();
    await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(50), { timeout: 20_000, interval: 50 });
    await quiet(call);
    await call.speak(await voice!.speak('Can I speak to a person?', AbortSignal.timeout(15_000)));

    // After the agent's last words, the live call is redirected to the leg: the number, its time limit and its status callback.
    await vi.waitFor(() => expect(placed.redirects.some((r) => r.includes('<Dial'))).toBe(true), {
      timeout: 30_000,
      interval: 50,
    });
    const callbackUrl = `${publicUrl}/api/webhooks/twilio/dial/${sessionId}`;
    expect(placed.redirects.find((r) => r.includes('<Dial'))).toContain(
      `<Dial timeLimit="300"><Number statusCallbackEvent="completed" statusCallback="${callbackUrl}" statusCallbackMethod="POST">+14155550111</Number></Dial>`,
    );
    const legRef = `${sessionId}:transfer`;
    const leg = () =>
      t.database.db.selectFrom('call_charges').selectAll().where('ref', '=', legRef).executeTakeFirstOrThrow();
    expect(await leg()).toMatchObject({
      state: 'open',
      direction: 'leg',
      rate: 280,
      max_seconds: 300,
      hold_cents: callCostCents(300, 280),
    });
    await vi.waitFor(
      async () => {
        const view = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
        ).json();
        expect(view).toMatchObject({ status: 'completed', outcome: 'transferred' });
        expect(view.toolCalls).toEqual([
          expect.objectContaining({ name: 'transfer_to_human', result: { ok: true, name: 'Sam' } }),
        ]);
      },
      { timeout: 20_000, interval: 50 },
    );

    // The dialled leg ends long after the session: Twilio's signed completed with the leg's own duration. A forged one changes nothing.
    const final = {
      AccountSid: twilio.accountSid,
      CallSid: 'CA0000000000000000000000000000leg1',
      ParentCallSid: placed.sid,
      CallStatus: 'completed',
      CallDuration: '3600',
      Direction: 'outbound-dial',
    };
    const forged = await fetch(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'bm90IGEgc2lnbmF0dXJl' },
      body: new URLSearchParams(final),
    });
    expect(forged.status).toBe(400);
    expect(await leg()).toMatchObject({ state: 'open' });
    for (let i = 0; i < 2; i++) expect((await twilio.postSigned(callbackUrl, final)).status).toBe(204);
    // 3600 s at 280 a minute would be $1.68: the leg is charged per started minute up to its hold, once.
    expect(await leg()).toMatchObject({ state: 'settled', seconds: 3600, charged_cents: callCostCents(300, 280) });
    expect(await t.services.billing.account.balanceCents(user.id)).toBe(
      100 -
        Number(
          (
            await t.database.db
              .selectFrom('call_charges')
              .select('charged_cents')
              .where('ref', '=', sessionId)
              .executeTakeFirstOrThrow()
          ).charged_cents,
        ) -
        callCostCents(300, 280),
    );
  }, 90_000);

  it('leaves the voicemail message after an answering machine beeps, then hangs up (outcome voicemail)', async () => {
    const user = await createFundedUser(t);
    const server = await registerServer(t, user);
    const numberId = await twilioNumber(t, twilio, user, `+1415555${String(Math.floor(1000 + Math.random() * 8999))}`);
    const jwt = await signPayload(server, {
      agent: {
        name: 'Amy',
        firstMessage: 'Hello Grace, this is Amy from the clinic, calling about your appointment tomorrow.',
        voicemailMessage: 'Hi Grace, Amy from the clinic. Please call us back.',
      },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'prompt',
      prompt: 'Confirm the appointment.',
      phoneNumberId: numberId,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(res.statusCode, res.body).toBe(204);
    const sessionId = res.headers['x-session-id'] as string;
    const placed = twilio.calls.at(-1)!;
    const stream = /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml)!;
    const call = new FakeTwilioCall(stream[1]!, stream[2]!, placed.sid, twilio.accountSid);
    await call.open();
    await vi.waitFor(() => expect(call.agentFrames).toBeGreaterThan(10), { timeout: 20_000, interval: 50 });
    // The machine's greeting ended with a beep: Twilio's asynchronous verdict.
    expect(
      (
        await twilio.postSigned(placed.amdCallback!, {
          CallSid: placed.sid,
          AccountSid: twilio.accountSid,
          AnsweredBy: 'machine_end_beep',
          MachineDetectionDuration: '4200',
        })
      ).status,
    ).toBe(204);
    await vi.waitFor(() => expect(placed.redirects.some((r) => r.includes('<Hangup/>'))).toBe(true), {
      timeout: 30_000,
      interval: 50,
    });
    await vi.waitFor(
      async () => {
        const view = (
          await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
        ).json();
        expect(view).toMatchObject({ status: 'completed', outcome: 'voicemail' });
        expect(view.transcript).toEqual(
          expect.arrayContaining([
            expect.objectContaining({ role: 'agent', text: 'Hi Grace, Amy from the clinic. Please call us back.' }),
          ]),
        );
      },
      { timeout: 20_000, interval: 50 },
    );
  }, 90_000);
});
