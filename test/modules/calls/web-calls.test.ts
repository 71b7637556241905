// Calls from a browser end to end (DESIGN.md "Calls from a browser and the
// console"): POST /api/calls/web, then the test plays the browser on the
// real WebSocket of its answer, speaking flite speech at 16 kHz. The sandbox
// dialogue engine answers from a knowledge base (pocketsphinx recognises the
// 16 kHz audio: keyword spotting, no script), transcript and tool messages
// arrive, barge-in sends `clear`, the record has direction web and nothing is
// charged. Limits: single-use tokens (1008), concurrency (429
// too_many_calls), the hourly rate limit (429 rate_limited), the longest
// call (max_duration).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { OfflineCallerVoice } from '../../../src/providers/call-speech/offline-caller.js';
import { createPocketsphinxSpeechToText } from '../../../src/providers/speech-to-text/pocketsphinx.js';
import { NOT_RECOGNISED } from '../../../src/providers/speech-to-text/none.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser, createVerifiedUser, registerUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { callConfig, callRecords } from './support.js';
import { BrowserCall, WallClock, clinicKnowledge, endedCall, startWebCall } from './web-call-support.js';

// flite's slt voice speaks at 16 kHz, as a browser's microphone delivers.
const voice = OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'slt' });
const pocketsphinx = createPocketsphinxSpeechToText() !== null;
const speak16k = (text: string) => voice!.speak(text, new AbortController().signal, 16_000);

async function listeningApp(env: Record<string, string> = {}): Promise<TestApp> {
  const port = await freePort();
  const t = await createTestApp({
    clock: new WallClock(),
    env: { PORT: String(port), ...env },
    config: { ...callConfig(), publicUrl: `http://127.0.0.1:${port}` },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

const ledger = (t: TestApp, userId: string) =>
  t.database.db.selectFrom('credit_ledger').selectAll().where('user_id', '=', userId).execute();
const charges = (t: TestApp, userId: string) =>
  t.database.db.selectFrom('call_charges').selectAll().where('user_id', '=', userId).execute();
const usage = (t: TestApp, userId: string) =>
  t.database.db.selectFrom('billing_usage').selectAll().where('user_id', '=', userId).execute();
const transcriptEvents = async (t: TestApp, userId: string, sessionId: string) =>
  (
    await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', userId)
      .where('type', '=', 'call_transcript')
      .orderBy('id')
      .execute()
  )
    .map((r) => JSON.parse(r.payload))
    .filter((p) => p.session_id === sessionId);
const statusEvents = async (t: TestApp, userId: string, sessionId: string) =>
  (
    await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', userId)
      .where('type', '=', 'call_status')
      .orderBy('id')
      .execute()
  )
    .map((r) => JSON.parse(r.payload))
    .filter((p) => p.session_id === sessionId);

describe.skipIf(!voice)('web calls (default limits, offline recognition)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await listeningApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('talks with the agent from a browser: greeting, a question answered from the knowledge base, transcript and tool messages, hang-up; recorded as web, never charged', async () => {
    const user = await createFundedUser(t);
    const kbId = await clinicKnowledge(t, user);
    const ledgerBefore = await ledger(t, user.id);
    const res = await startWebCall(t, user, {
      agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
      knowledgeBaseId: kbId,
    });
    expect(res.statusCode, res.body).toBe(201);
    const started = res.json();
    expect(started).toEqual({
      sessionId: expect.any(String),
      url: expect.stringMatching(/^ws:\/\/127\.0\.0\.1:\d+\/api\/media\/web\?token=/),
      expiresAt: expect.any(String),
      audio: { encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 },
    });
    expect(Date.parse(started.expiresAt) - Date.now()).toBeGreaterThan(50_000);
    expect(Date.parse(started.expiresAt) - Date.now()).toBeLessThanOrEqual(61_000);

    const call = new BrowserCall(started.url);
    await call.opened;
    await call.waitFor(() => call.lines('agent').length === 1, 'the greeting');
    expect(call.lines('agent')[0]).toBe('Hello, this is Amy from the clinic.');
    // About two seconds of greeting at 16 kHz, 2 bytes a sample.
    expect(call.agentBytes).toBeGreaterThan(16_000 * 2);
    // The greeting's line came as the agent started saying it, with its first audio, not once its audio had ended;
    // then again, final, once heard.
    const transcripts = call.messages.flatMap((m, i) =>
      m.type === 'transcript' ? [{ m, bytesBefore: call.agentBytesAt[i]! }] : [],
    );
    expect(transcripts.map(({ m }) => m)).toEqual([
      { type: 'transcript', role: 'agent', text: 'Hello, this is Amy from the clinic.', final: false },
      { type: 'transcript', role: 'agent', text: 'Hello, this is Amy from the clinic.', final: true },
    ]);
    const [saying, heard] = transcripts;
    expect(saying!.bytesBefore).toBeLessThan(16_000 * 2 * 0.2);
    expect(heard!.bytesBefore).toBeGreaterThan(16_000 * 2);
    expect(call.of('mark').length).toBeGreaterThan(0);

    await call.speak(await speak16k('Can you tell me your opening hours please?'));
    await call.waitFor(() => call.lines('agent').length >= 2, 'the answer', 30_000);
    const caller = call.lines('caller')[0]!;
    const answer = call.lines('agent')[1]!;
    if (pocketsphinx) {
      // pocketsphinx spotted the words the dialogue engine acts on in the 16 kHz audio; the engine searched the knowledge base.
      expect(caller).toContain('opening hours');
      expect(answer).toContain('Monday to Friday');
      const tool = call.of('tool')[0]!;
      expect(tool).toMatchObject({
        type: 'tool',
        name: 'search_knowledge',
        arguments: { query: expect.stringContaining('opening hours') },
      });
      expect(JSON.stringify(tool.result)).toContain('Monday to Friday');
    } else {
      expect(caller).toBe(NOT_RECOGNISED);
    }
    // Every agent reply came first as said (final: false), then as heard; caller lines once, final.
    const agentMessages = call.of('transcript').filter((m) => m.role === 'agent');
    const said = agentMessages.filter((m) => m.final === false).map((m) => m.text);
    expect(said[0]).toBe('Hello, this is Amy from the clinic.');
    expect(said.at(-1)).toBe(answer);
    expect(
      call
        .of('transcript')
        .filter((m) => m.role === 'caller')
        .every((m) => m.final === true),
    ).toBe(true);

    call.send({ type: 'hangup' });
    expect(await call.closed).toMatchObject({ code: 1000, reason: 'caller_hung_up' });
    // The end is told even after the caller's own hang-up, last.
    expect(call.messages.at(-1)).toEqual({ type: 'ended', reason: 'caller_hung_up' });

    const view = await endedCall(t, user, started.sessionId);
    expect(view).toMatchObject({
      id: started.sessionId,
      direction: 'web',
      status: 'completed',
      outcome: 'completed',
      reason: 'caller_hung_up',
    });
    expect(view.from).toBeUndefined();
    expect(view.to).toBeUndefined();
    expect(view.answeredAt).toBeDefined();
    expect(view.transcript.map((l: { role: string; text: string }) => [l.role, l.text])).toEqual([
      ['agent', 'Hello, this is Amy from the clinic.'],
      ['caller', caller],
      ['agent', answer],
    ]);
    // The answer's latency, split per stage.
    expect(view.transcript[2].latency).toMatchObject({
      sttMs: expect.any(Number),
      llmFirstTokenMs: expect.any(Number),
      ttsFirstByteMs: expect.any(Number),
      overheadMs: expect.any(Number),
      totalMs: expect.any(Number),
    });
    if (pocketsphinx) expect(view.toolCalls.map((c: { name: string }) => c.name)).toEqual(['search_knowledge']);
    // The recording: two channels at 8 kHz, like a phone call's.
    expect(view.recordingUrl).toBe(`/api/calls/${started.sessionId}/recording`);
    const wav = await t.app.inject({ method: 'GET', url: view.recordingUrl, headers: bearer(user.token) });
    expect(wav.statusCode).toBe(200);
    expect(wav.rawPayload.readUInt16LE(22)).toBe(2);
    expect(wav.rawPayload.readUInt32LE(24)).toBe(8000);

    // The list, the events and the encrypted record say web.
    const list = (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json();
    expect(list.calls[0]).toMatchObject({ id: started.sessionId, direction: 'web', status: 'completed' });
    const events = await statusEvents(t, user.id, started.sessionId);
    expect(events.map((e) => e.status)).toEqual(['in_progress', 'completed']);
    expect(events.every((e) => e.direction === 'web')).toBe(true);
    const record = (await callRecords(t, user)).find((r) => r.session_id === started.sessionId)!;
    expect(record).toMatchObject({ direction: 'web', status: 'completed', outcome: 'completed' });

    // Never charged: no hold, no ledger entry, no usage, no charge row.
    expect(await ledger(t, user.id)).toEqual(ledgerBefore);
    expect(await charges(t, user.id)).toEqual([]);
    expect(await usage(t, user.id)).toEqual([]);
  }, 90_000);

  it('works for an account without money, with an agent from the agents store', async () => {
    const user = await createVerifiedUser(t);
    const agent = await t.services.data.records.create(
      user.id,
      'agents',
      Buffer.from(JSON.stringify({ name: 'Ava', firstMessage: 'Hi, Ava here.' })),
    );
    const res = await startWebCall(t, user, { agentId: agent.id });
    expect(res.statusCode, res.body).toBe(201);
    const call = new BrowserCall(res.json().url);
    await call.waitFor(() => call.lines('agent').length === 1, 'the greeting');
    expect(call.lines('agent')).toEqual(['Hi, Ava here.']);
    call.ws.close(1000);
    const view = await endedCall(t, user, res.json().sessionId);
    expect(view).toMatchObject({ direction: 'web', status: 'completed', reason: 'socket_closed' });
    expect(await ledger(t, user.id)).toEqual([]);
  }, 60_000);

  it('sends clear when the caller speaks over the agent, and keeps only what was heard', async () => {
    const user = await createVerifiedUser(t);
    const long =
      'Hello, this is Amy from the clinic. I can tell you about our opening hours, our doctors, our prices and our address. I can also book an appointment for you, or put you through to a colleague.';
    const res = await startWebCall(t, user, { agent: { name: 'Amy', firstMessage: long } });
    const call = new BrowserCall(res.json().url);
    await call.waitFor(() => call.agentBytes > 16_000 * 2 * 1.5, 'a second and a half of the greeting');
    await call.speak(await speak16k('Can you tell me your opening hours please?'), 600);
    await call.waitFor(() => call.of('clear').length > 0, 'clear');
    // The agent stopped: its audio ends within a frame or two of the clear.
    const bytesAtClear = call.agentBytes;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(call.agentBytes - bytesAtClear).toBeLessThan(16_000 * 2 * 0.3);
    await call.waitFor(() => call.lines('agent').length >= 1, 'the cut greeting in the transcript');
    const heard = call.lines('agent')[0]!;
    expect(long.startsWith(heard.replace(/[.…]+$/, '').slice(0, 20))).toBe(true);
    expect(heard.length).toBeLessThan(long.length);
    // The greeting was shown sentence by sentence as said, then as heard, marked cut off.
    const greeting = call.of('transcript').filter((m) => m.role === 'agent');
    expect(greeting[0]).toEqual({
      type: 'transcript',
      role: 'agent',
      text: 'Hello, this is Amy from the clinic.',
      final: false,
    });
    expect(greeting.find((m) => m.final)).toEqual({
      type: 'transcript',
      role: 'agent',
      text: heard,
      final: true,
      interrupted: true,
    });
    call.send({ type: 'hangup' });
    await call.closed;
    const view = await endedCall(t, user, res.json().sessionId);
    expect(view.transcript[0]).toMatchObject({ role: 'agent', interrupted: true });
    // The events: each sentence as it started, then the cut one's heard part, interrupted, before the caller's line.
    const events = await transcriptEvents(t, user.id, res.json().sessionId);
    expect(events[0]).toMatchObject({ role: 'agent', text: 'Hello, this is Amy from the clinic.' });
    const cut = events.findIndex((e) => e.interrupted === true);
    expect(cut).toBeGreaterThan(0);
    expect(events[cut].role).toBe('agent');
    expect(heard.endsWith(events[cut].text)).toBe(true);
    expect(events.slice(0, cut).every((e) => e.role === 'agent' && !e.interrupted)).toBe(true);
  }, 60_000);

  it('accepts a token once: a second connection, a forged or missing token close with 1008; a plain GET is 426', async () => {
    const user = await createVerifiedUser(t);
    const res = await startWebCall(t, user, { agent: { name: 'Amy' } });
    const first = new BrowserCall(res.json().url);
    await first.waitFor(() => first.agentBytes > 0, 'audio on the first connection');
    const again = new BrowserCall(res.json().url);
    expect(await again.closed).toMatchObject({ code: 1008, reason: expect.stringContaining('already used') });
    const url = new URL(res.json().url);
    const token = url.searchParams.get('token')!;
    const [head, body] = token.split('.');
    url.searchParams.set('token', `${head}.${body}.${'A'.repeat(86)}`);
    expect(await new BrowserCall(url.toString()).closed).toMatchObject({ code: 1008 });
    url.searchParams.delete('token');
    expect(await new BrowserCall(url.toString()).closed).toMatchObject({ code: 1008, reason: 'no token' });
    // A token of another kind (the Twilio stream's) does not open a web call.
    const twilioToken = (await t.services.voice.tokens.issue(user.id, res.json().sessionId, 'twilio')).token;
    url.searchParams.set('token', twilioToken);
    expect(await new BrowserCall(url.toString()).closed).toMatchObject({ code: 1008 });
    const plain = await t.app.inject({ method: 'GET', url: `/api/media/web?token=${token}` });
    expect(plain.statusCode).toBe(426);
    expect(plain.json()).toMatchObject({ code: 'upgrade_required' });
    // The first connection still carries the call.
    expect(first.ws.readyState).toBe(WebSocket.OPEN);
    first.send({ type: 'hangup' });
    expect((await first.closed).code).toBe(1000);
  }, 60_000);

  it('does not carry a call that ended before its browser connected', async () => {
    const user = await createVerifiedUser(t);
    const res = await startWebCall(t, user, { agent: { name: 'Amy' } });
    await t.services.calls.calls.report(res.json().sessionId, 'test_canceled', {
      status: 'canceled',
      at: new Date().toISOString(),
    });
    const call = new BrowserCall(res.json().url);
    expect(await call.closed).toMatchObject({ code: 1000 });
    expect(call.messages).toEqual([{ type: 'ended', reason: 'call_ended' }]);
    expect(call.agentBytes).toBe(0);
    expect(
      (
        await t.app.inject({ method: 'GET', url: `/api/calls/${res.json().sessionId}`, headers: bearer(user.token) })
      ).json(),
    ).toMatchObject({ status: 'canceled' });
  }, 30_000);

  it('allows two web calls at once per user (429 too_many_calls beyond), counts a set-up call until its URL expires, and admits exactly two of many started at once', async () => {
    const user = await createVerifiedUser(t);
    const a = await startWebCall(t, user, { agent: { name: 'A' } });
    const b = await startWebCall(t, user, { agent: { name: 'B' } });
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    const c = await startWebCall(t, user, { agent: { name: 'C' } });
    expect(c.statusCode).toBe(429);
    expect(c.json()).toMatchObject({ code: 'too_many_calls' });
    // A refused call leaves nothing behind.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json().calls,
    ).toHaveLength(2);

    // A's call runs and ends: its place is free again.
    const callA = new BrowserCall(a.json().url);
    await callA.waitFor(() => callA.agentBytes > 0, 'audio');
    expect((await startWebCall(t, user, { agent: { name: 'C' } })).statusCode).toBe(429);
    callA.send({ type: 'hangup' });
    await endedCall(t, user, a.json().sessionId);
    const d = await startWebCall(t, user, { agent: { name: 'D' } });
    expect(d.statusCode).toBe(201);

    // B was never connected: once its URL has expired it no longer counts.
    expect((await startWebCall(t, user, { agent: { name: 'E' } })).statusCode).toBe(429);
    await t.database.db
      .updateTable('call_sessions')
      .set({ created_at: Date.now() - 61_000 })
      .where('id', '=', b.json().sessionId)
      .execute();
    expect((await startWebCall(t, user, { agent: { name: 'E' } })).statusCode).toBe(201);

    // Many at once from a fresh account: exactly two (checked one at a time per user; on PostgreSQL the six inserts of one turn would otherwise share a statement and each count all six).
    const other = await createVerifiedUser(t);
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) => startWebCall(t, other, { agent: { name: `N${i}` } })),
    );
    const admitted = burst.filter((r) => r.statusCode === 201).length;
    expect(admitted).toBe(2);
    for (const r of burst.filter((x) => x.statusCode !== 201))
      expect(r.json()).toMatchObject({ code: 'too_many_calls' });
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(other.token) })).json().calls,
    ).toHaveLength(admitted);
  }, 60_000);
});

describe.skipIf(!voice)('web calls (short calls, many at once, no recogniser)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await listeningApp({ WEB_CALL_MAX_SECONDS: '20', WEB_CALL_CONCURRENCY_PER_USER: '50', STT_PROVIDER: 'none' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('ends the call after WEB_CALL_MAX_SECONDS with an ended message, then close 1000; outcome max_duration', async () => {
    const user = await createVerifiedUser(t);
    const res = await startWebCall(t, user, { agent: { name: 'Amy', firstMessage: 'Hello.' } });
    const opened = Date.now();
    const call = new BrowserCall(res.json().url);
    const closed = await call.closed;
    expect(closed.code).toBe(1000);
    expect(Date.now() - opened).toBeGreaterThan(19_000);
    expect(Date.now() - opened).toBeLessThan(28_000);
    expect(call.of('ended')).toEqual([{ type: 'ended', reason: 'max_duration' }]);
    expect(call.messages.at(-1)).toEqual({ type: 'ended', reason: 'max_duration' });
    const view = await endedCall(t, user, res.json().sessionId);
    expect(view).toMatchObject({ direction: 'web', status: 'completed', outcome: 'max_duration' });
  }, 45_000);

  it('without a recogniser, each utterance is "(speech not recognised)" and the agent asks again', async () => {
    const user = await createVerifiedUser(t);
    const res = await startWebCall(t, user, { agent: { name: 'Amy', firstMessage: 'Hello.' } });
    const call = new BrowserCall(res.json().url);
    await call.waitFor(() => call.lines('agent').length === 1, 'the greeting');
    await call.speak(await speak16k('Can you tell me your opening hours please?'));
    await call.waitFor(() => call.lines('agent').length >= 2, 'the answer', 15_000);
    expect(call.lines('caller')).toEqual([NOT_RECOGNISED]);
    expect(call.lines('agent')[1]).toBe("Sorry, I didn't catch that. Could you say that again?");
    call.send({ type: 'hangup' });
    await call.closed;
    const view = await endedCall(t, user, res.json().sessionId);
    expect(view.transcript[1]).toMatchObject({ role: 'caller', text: NOT_RECOGNISED });
  }, 40_000);

  it('starts at most 20 web calls per user per hour (429 rate_limited with Retry-After); refused calls are not recorded', async () => {
    const user = await createVerifiedUser(t);
    const answers = [];
    for (let i = 0; i < 21; i++) answers.push(await startWebCall(t, user, { agent: { name: `A${i}` } }));
    expect(answers.slice(0, 20).map((r) => r.statusCode)).toEqual(Array(20).fill(201));
    expect(answers[20]!.statusCode).toBe(429);
    expect(answers[20]!.json()).toMatchObject({ code: 'rate_limited' });
    expect(Number(answers[20]!.headers['retry-after'])).toBeGreaterThan(0);
    const list = (
      await t.app.inject({ method: 'GET', url: '/api/calls?limit=100', headers: bearer(user.token) })
    ).json();
    expect(list.calls).toHaveLength(20);
    // Another account is not affected.
    const other = await createVerifiedUser(t);
    expect((await startWebCall(t, other, { agent: { name: 'B' } })).statusCode).toBe(201);
  }, 60_000);
});

describe('POST /api/calls/web: input, ownership, a call nobody connects to', () => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp({ config: callConfig() });
    user = await createVerifiedUser(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('needs exactly one of agentId and agent, an agent record with a name, and things of your own', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{}, 400, 'invalid_input'],
      [{ agent: { name: 'A' }, agentId: 'x' }, 400, 'invalid_input'],
      [{ agent: { name: ' ' } }, 400, 'invalid_input'],
      [{ agentId: 'no-such-object' }, 404, 'not_found'],
      [{ agent: { name: 'A' }, knowledgeBaseId: 'no-such-kb' }, 404, 'not_found'],
      [{ agent: { name: 'A' }, integrations: ['no-such-integration'] }, 404, 'not_found'],
      [{ agent: { name: 'A' }, personaId: 'no-such-persona' }, 404, 'not_found'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await startWebCall(t, user, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json().code).toBe(code);
    }
    // Another user's agent and knowledge base are not found.
    const other = await createVerifiedUser(t);
    const theirAgent = await t.services.data.records.create(
      other.id,
      'agents',
      Buffer.from(JSON.stringify({ name: 'Theirs' })),
    );
    expect((await startWebCall(t, user, { agentId: theirAgent.id })).statusCode).toBe(404);
    const theirKb = (
      await t.app.inject({
        method: 'PUT',
        url: '/api/knowledge-bases',
        headers: bearer(other.token),
        payload: { name: 'Theirs' },
      })
    ).json().id;
    expect((await startWebCall(t, user, { agent: { name: 'A' }, knowledgeBaseId: theirKb })).statusCode).toBe(404);
    // A stored object that is not an agent record.
    const notAgent = await t.services.data.records.create(user.id, 'agents', Buffer.from('not json'));
    expect((await startWebCall(t, user, { agentId: notAgent.id })).json()).toMatchObject({ code: 'invalid_input' });
    // Data-plane authentication: a verified phone.
    const unverified = await registerUser(t);
    expect((await startWebCall(t, unverified, { agent: { name: 'A' } })).statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/calls/web', payload: { agent: { name: 'A' } } })).statusCode,
    ).toBe(401);
    // Nothing was recorded for the refusals.
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/calls', headers: bearer(user.token) })).json().calls,
    ).toEqual([]);
  });

  it('ends a call whose browser never connects as canceled (no_answer, not_connected) once its URL has expired', async () => {
    const res = await startWebCall(t, user, { agent: { name: 'A' } });
    expect(res.statusCode).toBe(201);
    const { sessionId } = res.json();
    t.clock.advance(60_000);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })).json()
        .status,
    ).toBe('queued');
    t.clock.advance(11_000);
    await vi.waitFor(
      async () =>
        expect(
          (await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })).json(),
        ).toMatchObject({ status: 'canceled', outcome: 'no_answer', reason: 'not_connected', direction: 'web' }),
      { timeout: 5000 },
    );
    const events = await statusEvents(t, user.id, sessionId);
    expect(events).toEqual([
      expect.objectContaining({ status: 'canceled', direction: 'web', reason: 'not_connected' }),
    ]);
    // Its token is expired too: the socket would close with 1008 (checked above with a listening app).
    await expect(
      t.services.voice.tokens.accept(new URL(res.json().url).searchParams.get('token')!, 'web'),
    ).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
