// The durable job queue on a real database, as two instances sharing it: every
// job runs once, a failing one is retried and then given up, a job whose
// instance died mid-run is run again by another once its lease ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../../src/modules/platform/job-store.js';
import { type ClaimedJob, JobQueue } from '../../../src/modules/platform/jobs.js';
import { type TestApp, createTestApp } from '../../support/app.js';

let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await createTestApp();
  b = await createTestApp({ shareDatabaseWith: a, clock: a.clock });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const queueOf = (app: TestApp) => JobQueue.create(app.database.db, app.database.dialect, a.clock, 20);
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('JobQueue', () => {
  it('runs each of 60 jobs exactly once across two instances claiming at once, each at most its concurrency at a time', async () => {
    const ran: string[] = [];
    const queues = [queueOf(a), queueOf(b)];
    const running = [0, 0];
    const most = [0, 0];
    queues.forEach((q, i) =>
      q.define<{ n: number }>('count', {
        concurrency: 5,
        run: async (job) => {
          most[i] = Math.max(most[i]!, ++running[i]!);
          await new Promise((r) => setTimeout(r, 5));
          running[i]!--;
          ran.push(String(job.payload.n));
        },
      }),
    );
    await queues[0]!.enqueue(
      a.database.db,
      Array.from({ length: 60 }, (_, n) => ({ kind: 'count', payload: { n } })),
    );
    for (const q of queues) q.start();
    await until(() => ran.length >= 60);
    await Promise.all(queues.map((q) => q.stop()));
    expect(ran.sort()).toEqual(Array.from({ length: 60 }, (_, n) => String(n)).sort());
    // Each instance runs at most its concurrency at once (PostgreSQL once claimed more than asked for).
    expect(Math.max(...most)).toBeLessThanOrEqual(5);
    expect(Math.max(...most)).toBeGreaterThan(1);
  });

  it('retries a failing job, then gives up after its attempts with the last error', async () => {
    const attempts: number[] = [];
    let gaveUp: { job: ClaimedJob; error: string } | null = null;
    const queue = queueOf(a);
    queue.define('flaky', {
      maxAttempts: 3,
      retryDelayMs: () => 0,
      run: async (job) => {
        attempts.push(job.attempt);
        throw new Error(`failure ${job.attempt}`);
      },
      gaveUp: async (job, error) => {
        gaveUp = { job, error };
      },
    });
    const [id] = await queue.enqueue(a.database.db, [{ kind: 'flaky', userId: 'u1', payload: {} }]);
    queue.start();
    await until(() => gaveUp !== null);
    await queue.stop();
    expect(attempts).toEqual([1, 2, 3]);
    expect(gaveUp!.error).toBe('failure 3');
    expect((await new JobStore(a.database.db, a.database.dialect).find(id!))?.status).toBe('failed');
    // Housekeeping deletes ended jobs older than its horizon, and only those.
    await queue.purgeEnded(a.clock.now());
    expect(await new JobStore(a.database.db, a.database.dialect).find(id!)).toBeDefined();
    await queue.purgeEnded(a.clock.now() + 1);
    expect(await new JobStore(a.database.db, a.database.dialect).find(id!)).toBeUndefined();
  });

  it('runs again, elsewhere, a job whose instance died while running it, once its lease ends', async () => {
    const store = new JobStore(a.database.db, a.database.dialect);
    const dead = queueOf(a);
    const [id] = await dead.enqueue(a.database.db, [{ kind: 'orphan', payload: { x: 1 } }]);
    // The dying instance claimed it and never finished (kill -9).
    const now = a.clock.now();
    const [claimed] = await store.claimDue('orphan', now, now + 60_000, 1);
    expect(claimed?.id).toBe(id);
    const ran: number[] = [];
    const survivor = queueOf(b);
    survivor.define('orphan', { run: async (job) => void ran.push(job.attempt) });
    survivor.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(ran).toEqual([]); // the lease still holds
    a.clock.advance(61_000);
    survivor.wake('orphan');
    await until(() => ran.length === 1);
    await survivor.stop();
    expect(ran).toEqual([2]);
    expect((await store.find(id!))?.status).toBe('done');
  });
});
