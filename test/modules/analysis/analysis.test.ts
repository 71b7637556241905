// Post-call analysis end to end on a real database (SQLite, or PostgreSQL
// with DATABASE_URL): a call ends through the calls service, its analysis job
// runs on the one job queue, and the result is on GET /api/calls/{id}, in the
// calls-store record, in a performance-metrics record and tasks records (all
// decrypted with the stores' keys), with a call_analysis event and a signed
// webhook (checked with the official standardwebhooks library). The sandbox
// analyser on the sandbox carrier's default script and on a pathway call.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { eventPayloadErrors } from '../../support/event-schemas.js';
import { bearer, createFundedUser, createVerifiedUser } from '../../support/factories.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { callConfig } from '../calls/support.js';
import { client } from '../data/support.js';
import { eventually } from '../events/support.js';
import { analysedCall, endedCall, storeRecords } from './support.js';

let t: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  await t.app.ready();
  t.services.platform.jobs.start();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const lat = (totalMs: number) => ({ sttMs: 200, llmFirstTokenMs: 200, ttsFirstByteMs: 100, overheadMs: 10, totalMs });

/** The sandbox carrier's default caller, as the voice agent records the call (lines with times and latency). */
const DEFAULT_SCRIPT_CALL = {
  transcript: [
    { role: 'agent', text: 'Hello Grace, this is Amy from the clinic.', startMs: 0, endMs: 2000 },
    { role: 'caller', text: 'Hello, who is this?', startMs: 2500, endMs: 3500 },
    {
      role: 'agent',
      text: 'This is Amy from the clinic. How can I help you?',
      startMs: 4100,
      endMs: 6000,
      latency: lat(604),
    },
    { role: 'caller', text: 'Can you tell me your opening hours please?', startMs: 6500, endMs: 8500 },
    {
      role: 'agent',
      text: 'Opening hours: we are open Monday to Friday from nine to five.',
      startMs: 9200,
      endMs: 12000,
      latency: lat(712),
    },
    { role: 'caller', text: 'I would like to book a meeting for next Tuesday.', startMs: 12500, endMs: 14500 },
    {
      role: 'agent',
      text: 'I have booked you in for Tuesday at 10:00.',
      startMs: 15100,
      endMs: 17000,
      latency: lat(655),
      interrupted: true,
    },
    { role: 'caller', text: 'No thank you, goodbye.', startMs: 17500, endMs: 18500 },
    { role: 'agent', text: 'Goodbye!', startMs: 19000, endMs: 19500, latency: lat(530) },
  ],
  toolCalls: [
    {
      name: 'search_knowledge',
      arguments: { query: 'opening hours' },
      result: { matches: [{ text: 'Opening hours' }] },
      atMs: 8600,
    },
    {
      name: 'check_availability',
      arguments: { date: '2026-12-08' },
      result: { slots: ['2026-12-08T10:00:00Z'] },
      atMs: 14600,
    },
    {
      name: 'book_meeting',
      arguments: { start: '2026-12-08T10:00:00Z' },
      result: { booked: true, start: '2026-12-08T10:00:00Z', bookingUrl: 'https://calendly.example/x', message: 'ok' },
      atMs: 14800,
    },
    { name: 'end_call', arguments: {}, result: { ok: true }, atMs: 19000 },
  ],
};

describe('the sandbox analyser', () => {
  it('analyses the default script: summary, success by the booked meeting, fields, no open task; every record in its store; event and signed webhook', async () => {
    const user = await createFundedUser(t);
    const secret = (await client(t, user).get('/api/webhooks/secret')).json().secret;
    const sessionId = await endedCall(t, user, {
      ...DEFAULT_SCRIPT_CALL,
      agent: {
        name: 'Amy',
        analysis: {
          successCriteria: 'The caller booked a meeting',
          schema: {
            type: 'object',
            properties: {
              preferred_day: { type: 'string', format: 'date', description: 'The day of the meeting' },
              wants_newsletter: { type: 'boolean' },
            },
          },
        },
      },
      webhookUrl: `${receiver.url}/hooks/${'a'}`,
    });
    const call = await analysedCall(t, user, sessionId);
    const analysis = call.analysis;
    expect(analysis).toMatchObject({
      status: 'completed',
      by: 'sandbox',
      success: true,
      successReason: 'a meeting was booked',
      tasks: [],
      sentiment: 'positive',
    });
    expect(analysis.summary).toContain('asked "Can you tell me your opening hours please?" (answered)');
    expect(analysis.summary).toContain('booked a meeting for 2026-12-08T10:00:00Z');
    // "next Tuesday" relative to the day the call ended.
    expect(analysis.data.preferred_day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(new Date(`${analysis.data.preferred_day}T00:00:00Z`).getUTCDay()).toBe(2);
    expect(analysis.data.wants_newsletter).toBeUndefined();

    // The calls-store record holds the same analysis; the performance-metrics record the call's figures.
    const [record] = (await storeRecords(t, user, 'calls')).filter((r) => r.session_id === sessionId);
    expect(record!.analysis).toEqual(analysis);
    const metrics = (await storeRecords(t, user, 'performance-metrics')).filter((r) => r.sessionId === sessionId);
    expect(metrics).toEqual([
      {
        sessionId,
        agent: { name: 'Amy' },
        direction: 'web',
        outcome: 'completed',
        durationSeconds: 30,
        costUsd: 0,
        turns: 4,
        interruptions: 1,
        latency: { p50Ms: 604, p95Ms: 712 },
        success: true,
      },
    ]);
    expect(await storeRecords(t, user, 'tasks')).toEqual([]);

    // The row carries what analytics counts.
    const row = await t.database.db
      .selectFrom('call_sessions')
      .select(['success', 'latency_p50_ms', 'latency_p95_ms', 'analysis_status', 'agent_id'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect({ ...row, success: Number(row.success) }).toEqual({
      success: 1,
      latency_p50_ms: 604,
      latency_p95_ms: 712,
      analysis_status: 'completed',
      agent_id: 'Amy',
    });

    // One call_analysis event, as the document publishes it; the webhook's data is the same, signed.
    const events = (
      await t.database.db
        .selectFrom('events')
        .select('payload')
        .where('user_id', '=', user.id)
        .where('type', '=', 'call_analysis')
        .execute()
    ).map((e) => JSON.parse(e.payload));
    expect(events).toEqual([{ session_id: sessionId, status: 'completed', success: true, at: expect.any(String) }]);
    expect(eventPayloadErrors('call_analysis', events[0])).toEqual([]);
    // The call's own call_status deliveries go to the same address.
    const analysisDelivery = () =>
      receiver.received.find((r) => r.path === '/hooks/a' && JSON.parse(r.body).type === 'call_analysis');
    await eventually(() => Boolean(analysisDelivery()), 10_000, 'the webhook');
    const delivery = analysisDelivery()!;
    const body = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as {
      type: string;
      data: unknown;
    };
    expect(body).toMatchObject({ type: 'call_analysis', data: events[0] });
    // A forged delivery does not verify.
    expect(() =>
      new Webhook(secret).verify(
        delivery.body.replace('"completed"', '"failed"'),
        delivery.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it('makes a task of each request left open, with its day, and writes tasks once when analysed again', async () => {
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, {
      transcript: [
        { role: 'agent', text: 'Hello, this is Amy.' },
        { role: 'caller', text: 'Could I book an appointment for tomorrow?' },
        { role: 'agent', text: "Sorry, I can't book meetings on this call." },
        { role: 'caller', text: 'Can I speak to a person?' },
        { role: 'agent', text: 'Nobody is available right now.' },
      ],
    });
    const call = await analysedCall(t, user, sessionId);
    expect(call.analysis.success).toBe(false);
    expect(call.analysis.successReason).toBe('2 request(s) left open');
    const tomorrow = new Date(Math.floor(t.clock.now() / 86_400_000 + 1) * 86_400_000).toISOString().slice(0, 10);
    expect(call.analysis.tasks).toEqual([
      { title: 'Book a meeting with Grace', dueDate: tomorrow },
      { title: 'Call Grace back: they asked for a person' },
    ]);
    const tasks = await storeRecords(t, user, 'tasks');
    expect(tasks).toEqual([
      { title: 'Book a meeting with Grace', dueDate: tomorrow, sessionId, contact: { name: 'Grace' } },
      { title: 'Call Grace back: they asked for a person', sessionId, contact: { name: 'Grace' } },
    ]);

    // Run again: a second event, the metrics record replaced (still one), no second set of tasks.
    const rerun = await t.app.inject({
      method: 'POST',
      url: `/api/calls/${sessionId}/analysis`,
      headers: bearer(user.token),
    });
    expect(rerun.statusCode, rerun.body).toBe(202);
    expect(rerun.json()).toEqual({ status: 'queued' });
    const analysisEvents = () =>
      t.database.db
        .selectFrom('events')
        .select('payload')
        .where('user_id', '=', user.id)
        .where('type', '=', 'call_analysis')
        .execute();
    await eventually(async () => (await analysisEvents()).length === 2, 10_000, 'the second analysis');
    expect(await storeRecords(t, user, 'tasks')).toHaveLength(2);
    expect(await storeRecords(t, user, 'performance-metrics')).toHaveLength(1);
  });

  it('runs once per call: the job queued twice (a replayed end, two instances) writes one analysis; a call under way is 409 to re-run', async () => {
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, {
      transcript: [
        { role: 'agent', text: 'Hello.' },
        { role: 'caller', text: 'What time do you open?' },
        { role: 'agent', text: 'We open at nine.' },
      ],
    });
    await analysedCall(t, user, sessionId);
    await Promise.all([
      t.services.analysis.analysis.callFinished({ id: sessionId, userId: user.id }),
      t.services.analysis.analysis.callFinished({ id: sessionId, userId: user.id }),
    ]);
    await eventually(
      async () =>
        (
          await t.database.db
            .selectFrom('jobs')
            .select('status')
            .where('kind', '=', 'call_analysis')
            .where('user_id', '=', user.id)
            .execute()
        ).every((j) => j.status === 'done'),
      10_000,
      'the queued jobs',
    );
    const events = await t.database.db
      .selectFrom('events')
      .select('id')
      .where('user_id', '=', user.id)
      .where('type', '=', 'call_analysis')
      .execute();
    expect(events).toHaveLength(1);
    expect(await storeRecords(t, user, 'performance-metrics')).toHaveLength(1);

    const { sessionId: live } = await t.services.calls.calls.openWeb(user.id, {
      to: '',
      from: null,
      agent: { name: 'Amy' },
      contact: { name: 'Grace' },
      systemPrompt: 'You are Amy.',
      firstMessage: 'Hello.',
      voice: { provider: 'local', voiceId: 'en-us' },
      tools: [],
    });
    const early = await t.app.inject({
      method: 'POST',
      url: `/api/calls/${live}/analysis`,
      headers: bearer(user.token),
    });
    expect(early.statusCode).toBe(409);
    expect(early.json().code).toBe('conflict');
  });

  it("a call without a caller line gets metrics but no analysis; another user's call is 404 to re-run", async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, {
      transcript: [
        { role: 'agent', text: 'Hello, this is Amy.' },
        { role: 'caller', text: '(unclear)' },
      ],
      outcome: 'completed',
    });
    const call = await analysedCall(t, user, sessionId);
    expect(call.analysis).toBeUndefined();
    expect(call.status).toBe('completed');
    expect(await storeRecords(t, user, 'performance-metrics')).toMatchObject([{ sessionId, success: null, turns: 1 }]);
    const foreign = await t.app.inject({
      method: 'POST',
      url: `/api/calls/${sessionId}/analysis`,
      headers: bearer(other.token),
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('fills the schema from the pathway variables first, then the caller answer to the line that asks', async () => {
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, {
      agent: {
        name: 'Amy',
        analysis: {
          summary: false,
          schema: {
            type: 'object',
            properties: {
              party_size: { type: 'integer' },
              table_area: { type: 'string', enum: ['inside', 'terrace'] },
              allergies: { type: 'string' },
              email: { type: 'string' },
            },
          },
        },
      },
      transcript: [
        { role: 'agent', text: 'Welcome to the bistro.', node: 'start' },
        { role: 'caller', text: 'A table for four on the terrace please.', node: 'start' },
        { role: 'agent', text: 'Any allergies we should know about?', node: 'ask' },
        { role: 'caller', text: 'Peanuts, sadly.', node: 'ask' },
        { role: 'caller', text: 'You can write to grace@example.com.', node: 'ask' },
      ],
      fields: {
        pathway: { id: null, name: 'Bistro', path: [{ node: 'start', atMs: 0 }], variables: { party_size: 6 } },
      },
    });
    const call = await analysedCall(t, user, sessionId);
    expect(call.analysis.summary).toBeNull();
    // party_size from the pathway (6), not the words (four); the rest from the caller's lines.
    expect(call.analysis.data).toEqual({
      party_size: 6,
      table_area: 'terrace',
      allergies: 'Peanuts, sadly.',
      email: 'grace@example.com',
    });
  });
});

describe('agent analysis settings', () => {
  it('are refused with 400 naming the field in a call payload', async () => {
    const { parseAnalysisSettings } = await import('../../../src/modules/analysis/settings.js');
    expect(() => parseAnalysisSettings({ schema: { type: 'object', properties: { a: { type: 'array' } } } })).toThrow(
      'agent.analysis.schema.properties.a must have type string, number, integer or boolean',
    );
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, { type: 'string' }]));
    expect(() => parseAnalysisSettings({ schema: { type: 'object', properties: many } })).toThrow('at most 50');
    expect(() => parseAnalysisSettings({ summary: 'yes' })).toThrow('agent.analysis.summary must be a boolean');
    expect(parseAnalysisSettings({ tasks: false, successCriteria: ' booked ' })).toEqual({
      tasks: false,
      successCriteria: 'booked',
    });
  });
});
