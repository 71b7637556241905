// The call_analysis job's failure paths on a real database (SQLite, or
// PostgreSQL with DATABASE_URL): a job that keeps failing until its attempts
// run out leaves the call with a failed analysis (the reason on GET
// /api/calls/{id}, the event and the signed webhook of a failed analysis, the
// call itself untouched), and two jobs for one call at the same instant
// never both write it (the conditional claim: one wins, the other writes
// nothing), nor does a job overtaken by a re-run.
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TALLY } from '../../../src/modules/analysis/tally.js';
import { CallStore } from '../../../src/modules/calls/store.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { eventPayloadErrors } from '../../support/event-schemas.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';
import { callConfig } from '../calls/support.js';
import { client } from '../data/support.js';
import { eventually } from '../events/support.js';
import { endedCall, storeRecords } from './support.js';

let t: TestApp;
let receiver: WebhookReceiver;
beforeAll(async () => {
  t = await createTestApp({ config: callConfig() });
  await t.app.ready();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await t.services.platform.jobs.stop();
  await t.close();
  await receiver.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TRANSCRIPT = [
  { role: 'agent', text: 'Hello, this is Amy.' },
  { role: 'caller', text: 'What time do you open?' },
  { role: 'agent', text: 'We open at nine.' },
];

const analysisEvents = async (userId: string) =>
  (
    await t.database.db
      .selectFrom('events')
      .select('payload')
      .where('user_id', '=', userId)
      .where('type', '=', 'call_analysis')
      .execute()
  ).map((e) => JSON.parse(e.payload));

const row = (sessionId: string) =>
  t.database.db
    .selectFrom('call_sessions')
    .select(['status', 'analysis_status', 'analysis_job_id', 'tally'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();

describe('a call_analysis job that gives up', () => {
  it('leaves the call with a failed analysis saying why, its event and signed webhook; the call stays completed', async () => {
    const user = await createVerifiedUser(t);
    const secret = (await client(t, user).get('/api/webhooks/secret')).json().secret;
    // The performance-metrics store refuses every write: each attempt fails after the analysis is made.
    const records = t.services.data.records;
    const create = records.create.bind(records);
    vi.spyOn(records, 'create').mockImplementation(async (userId, store, bytes) => {
      if (store === 'performance-metrics') throw new Error('the performance-metrics store is unwritable');
      return create(userId, store, bytes);
    });
    const sessionId = await endedCall(t, user, { transcript: TRANSCRIPT, webhookUrl: `${receiver.url}/hooks/gave-up` });
    t.services.platform.jobs.start();
    const job = () =>
      t.database.db
        .selectFrom('jobs')
        .select(['status', 'attempts', 'last_error'])
        .where('kind', '=', 'call_analysis')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
    // Three attempts, each retried when its delay has passed on the test's clock.
    for (let attempt = 1; attempt <= 3; attempt++) {
      await eventually(
        async () => {
          const j = await job();
          return (j.status === 'pending' && j.attempts === attempt) || j.status === 'failed';
        },
        10_000,
        `attempt ${attempt}`,
      );
      t.clock.advance(60_000);
      t.services.platform.jobs.wake('call_analysis');
    }
    await eventually(async () => (await job()).status === 'failed', 10_000, 'the job to give up');
    expect((await job()).attempts).toBe(3);

    const call = (await client(t, user).get(`/api/calls/${sessionId}`)).json();
    expect(call.status).toBe('completed');
    expect(call.analysis).toMatchObject({
      status: 'failed',
      success: null,
      by: 'sandbox',
      reason: 'the analysis gave up after 3 attempts: the performance-metrics store is unwritable',
    });
    const [record] = await storeRecords(t, user, 'calls');
    expect(record!.analysis).toEqual(call.analysis);
    // Counted as an ended call whose success is undecided.
    const r = await row(sessionId);
    expect(r.analysis_status).toBe('failed');
    expect(r.tally! & TALLY.ended).toBe(TALLY.ended);
    expect(r.tally! & TALLY.judged).toBe(0);

    const events = await analysisEvents(user.id);
    expect(events).toEqual([{ session_id: sessionId, status: 'failed', success: null, at: expect.any(String) }]);
    expect(eventPayloadErrors('call_analysis', events[0])).toEqual([]);
    const delivery = () =>
      receiver.received.find((d) => d.path === '/hooks/gave-up' && JSON.parse(d.body).type === 'call_analysis');
    await eventually(() => Boolean(delivery()), 10_000, 'the webhook');
    const body = new Webhook(secret).verify(delivery()!.body, delivery()!.headers as Record<string, string>);
    expect(body).toMatchObject({ type: 'call_analysis', data: events[0] });
  });
});

describe('two jobs for one call', () => {
  /** Holds every findForAnalysis until `count` callers have read the call: they then go on together. */
  function readTogether(count: number) {
    const find = CallStore.prototype.findForAnalysis;
    let waiting: Array<() => void> = [];
    vi.spyOn(CallStore.prototype, 'findForAnalysis').mockImplementation(async function (this: CallStore, id) {
      const session = await find.call(this, id);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (waiting.length >= count) {
          for (const go of waiting) go();
          waiting = [];
        }
      });
      return session;
    });
  }

  it('at the same instant: one writes the analysis, its records and one event; the other writes nothing', async () => {
    await t.services.platform.jobs.stop();
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, { transcript: TRANSCRIPT });
    const service = t.services.analysis.analysis;
    // Both have read the call unanalysed and unclaimed before either writes.
    readTogether(2);
    await Promise.all([service.analyse({ sessionId }, 'job-one'), service.analyse({ sessionId }, 'job-two')]);
    const r = await row(sessionId);
    expect(['job-one', 'job-two']).toContain(r.analysis_job_id);
    expect(r.analysis_status).toBe('completed');
    expect(await analysisEvents(user.id)).toHaveLength(1);
    expect(await storeRecords(t, user, 'performance-metrics')).toHaveLength(1);
    const call = (await client(t, user).get(`/api/calls/${sessionId}`)).json();
    expect(call.analysis.status).toBe('completed');

    // Either one run again afterwards (a replayed job): nothing more is written.
    vi.restoreAllMocks();
    await service.analyse({ sessionId }, 'job-one');
    await service.analyse({ sessionId }, 'job-two');
    expect(await analysisEvents(user.id)).toHaveLength(1);
    expect(await storeRecords(t, user, 'performance-metrics')).toHaveLength(1);
  });

  it('a job overtaken by a re-run asked for meanwhile writes no row state and no event; the re-run does', async () => {
    await t.services.platform.jobs.stop();
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, { transcript: TRANSCRIPT });
    const service = t.services.analysis.analysis;
    // The first job is held once it has claimed the call (reading its record) until the re-run is done.
    const records = t.services.data.records;
    const read = records.read.bind(records);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    vi.spyOn(records, 'read').mockImplementation(async (...args: Parameters<typeof read>) => {
      if (args[1] === 'calls' && first) {
        first = false;
        await held;
      }
      return read(...args);
    });
    const overtaken = service.analyse({ sessionId }, 'job-first');
    await eventually(async () => (await row(sessionId)).analysis_job_id === 'job-first', 5000, 'the first claim');
    await service.analyse({ sessionId, rerun: true }, 'job-rerun');
    release();
    await overtaken;
    const r = await row(sessionId);
    expect(r.analysis_job_id).toBe('job-rerun');
    expect(r.analysis_status).toBe('completed');
    expect(await analysisEvents(user.id)).toHaveLength(1);
  });

  it('a re-run that gives up after a later re-run took the call over leaves that one standing', async () => {
    await t.services.platform.jobs.stop();
    const user = await createVerifiedUser(t);
    const sessionId = await endedCall(t, user, { transcript: TRANSCRIPT });
    const service = t.services.analysis.analysis;
    await service.analyse({ sessionId }, 'job-first');
    await service.analyse({ sessionId, rerun: true }, 'job-later');
    // The queue's hook for a job whose attempts ran out (JobKind.gaveUp), for the re-run that was overtaken.
    const gaveUp = (jobId: string) =>
      (
        service as unknown as { gaveUp(job: object, jobId: string, attempts: number, error: string): Promise<void> }
      ).gaveUp({ sessionId, rerun: true }, jobId, 3, 'the model is down');
    await gaveUp('job-overtaken');
    expect(await row(sessionId)).toMatchObject({ analysis_status: 'completed', analysis_job_id: 'job-later' });
    expect((await analysisEvents(user.id)).map((e) => e.status)).toEqual(['completed', 'completed']);
    // The re-run that holds the call giving up does fail it.
    await gaveUp('job-later');
    expect(await row(sessionId)).toMatchObject({ analysis_status: 'failed', analysis_job_id: 'job-later' });
    const call = (await client(t, user).get(`/api/calls/${sessionId}`)).json();
    expect(call.analysis).toMatchObject({
      status: 'failed',
      reason: 'the analysis gave up after 3 attempts: the model is down',
    });
  });
});
