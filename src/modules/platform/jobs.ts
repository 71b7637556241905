// The server's one durable job queue: work that must happen once even if an
// instance stops (agent test runs; post-call analysis, a dialer's attempts).
// Rows in the database (job-store.ts), claimed by one instance at a time
// under a lease that a running job keeps moving on; a job whose instance
// died is claimed again when its lease ends and counts one more attempt. A
// failing job is retried after a delay until its attempts run out, then its
// kind's `gaveUp` is told. Each kind has its own handler and concurrency per
// instance; enqueue() wakes the kind's worker at once on this instance, the
// poll finds jobs other instances asked for.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { JobStore } from './job-store.js';
import type { JobsTable } from './tables.js';

export interface ClaimedJob<P = unknown> {
  id: string;
  kind: string;
  userId: string | null;
  payload: P;
  /** 1 on the first run; more after a failure or a crash. */
  attempt: number;
}

export interface JobKind<P = unknown> {
  /** Runs one job. Throwing retries it (until maxAttempts); the signal aborts when the queue stops or the claim was lost. */
  run(job: ClaimedJob<P>, signal: AbortSignal): Promise<void>;
  /** The job failed its last attempt (or its instance died on it that many times). */
  gaveUp?(job: ClaimedJob<P>, error: string): Promise<void>;
  /** Jobs of this kind running at once on this instance. Default 4. */
  concurrency?: number;
  /** How long a claim lasts without renewal; renewed every third of it while the job runs. Default 60 s. */
  leaseMs?: number;
  /** Default 3. */
  maxAttempts?: number;
  /** Wait before the next attempt after `attempt` failed. Default 5 s times attempt. */
  retryDelayMs?(attempt: number): number;
}

export interface NewJob {
  kind: string;
  userId?: string | null;
  payload: unknown;
  /** Due at (ms); default now. */
  runAt?: number;
  id?: string;
}

type Log = { warn(obj: unknown, msg: string): void };

interface Worker {
  kind: JobKind;
  running: Set<Promise<void>>;
  controllers: Set<AbortController>;
  claiming: boolean;
  again: boolean;
}

export class JobQueue {
  private readonly workers = new Map<string, Worker>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private log: Log | null = null;

  constructor(
    private readonly store: JobStore,
    private readonly clock: Clock,
    private readonly options: { pollIntervalMs: number } = { pollIntervalMs: 1000 },
  ) {}

  static create(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', clock: Clock, pollIntervalMs = 1000) {
    return new JobQueue(new JobStore(db, dialect), clock, { pollIntervalMs });
  }

  reportErrorsTo(log: Log): void {
    this.log = log;
  }

  /** Registers the handler of a kind (once, before start). */
  define<P>(name: string, kind: JobKind<P>): void {
    if (this.workers.has(name)) throw new Error(`job kind ${name} is defined already`);
    this.workers.set(name, {
      kind: kind as JobKind,
      running: new Set(),
      controllers: new Set(),
      claiming: false,
      again: false,
    });
    if (!this.stopped) this.wake(name);
  }

  /** The rows of new jobs (insert them with JobStore.insert in the transaction that asks for them, then wake()). */
  rows(jobs: NewJob[]): JobsTable[] {
    const now = this.clock.now();
    return jobs.map((j) => ({
      id: j.id ?? newId(now),
      kind: j.kind,
      user_id: j.userId ?? null,
      payload: JSON.stringify(j.payload),
      status: 'pending',
      run_at: j.runAt ?? now,
      attempts: 0,
      max_attempts: this.workers.get(j.kind)?.kind.maxAttempts ?? 3,
      last_error: null,
      created_at: now,
      updated_at: now,
    }));
  }

  /** Inserts jobs through `db` (a transaction of the caller's, or the queue's database) and wakes their workers after. */
  async enqueue(db: Kysely<Database>, jobs: NewJob[]): Promise<string[]> {
    const rows = this.rows(jobs);
    await JobStore.insert(db, rows);
    if (!db.isTransaction) for (const kind of new Set(jobs.map((j) => j.kind))) this.wake(kind);
    return rows.map((r) => r.id);
  }

  /** Deletes the rows of jobs that ended (done or failed) before `before` (housekeeping). */
  purgeEnded(before: number): Promise<void> {
    return this.store.purgeEnded(before);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    for (const name of this.workers.keys()) this.wake(name);
    this.schedulePoll();
  }

  /** Stops claiming, aborts the jobs under way and waits for them: their leases end and another instance (or the next start) runs them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const w of this.workers.values()) for (const c of w.controllers) c.abort(new Error('the job queue stopped'));
    await this.whenIdle();
  }

  /** Resolves when no job of this instance is running or being claimed. */
  async whenIdle(): Promise<void> {
    for (;;) {
      const busy = [...this.workers.values()].filter((w) => w.running.size || w.claiming);
      if (!busy.length) return;
      await Promise.allSettled(busy.flatMap((w) => [...w.running]));
      if (busy.some((w) => w.claiming)) await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Looks for due jobs of `kind` (all kinds when absent) now. */
  wake(kind?: string): void {
    if (this.stopped) return;
    if (kind === undefined) {
      for (const name of this.workers.keys()) this.wake(name);
      return;
    }
    const worker = this.workers.get(kind);
    if (!worker) return;
    if (worker.claiming) {
      worker.again = true;
      return;
    }
    worker.claiming = true;
    void this.claimLoop(kind, worker).finally(() => {
      worker.claiming = false;
      if (worker.again && !this.stopped) {
        worker.again = false;
        this.wake(kind);
      }
    });
  }

  private schedulePoll(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.wake();
      if (!this.stopped) this.schedulePoll();
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }

  private async claimLoop(name: string, worker: Worker): Promise<void> {
    const concurrency = worker.kind.concurrency ?? 4;
    const leaseMs = worker.kind.leaseMs ?? 60_000;
    for (;;) {
      worker.again = false;
      const free = concurrency - worker.running.size;
      if (free <= 0 || this.stopped) return;
      const now = this.clock.now();
      let claimed: JobsTable[];
      try {
        claimed = await this.store.claimDue(name, now, now + leaseMs, free);
      } catch (err) {
        this.log?.warn({ err, kind: name }, 'job queue: claiming jobs failed');
        return;
      }
      for (const row of claimed) {
        const run = this.runOne(worker, row, leaseMs).finally(() => {
          worker.running.delete(run);
          this.wake(name);
        });
        worker.running.add(run);
      }
      if (claimed.length < free && !worker.again) return;
    }
  }

  private async runOne(worker: Worker, row: JobsTable, leaseMs: number): Promise<void> {
    const job: ClaimedJob = {
      id: row.id,
      kind: row.kind,
      userId: row.user_id,
      payload: JSON.parse(row.payload) as unknown,
      attempt: row.attempts,
    };
    const { kind } = worker;
    const maxAttempts = row.max_attempts;
    // Claimed again after its instance died on its last attempt: it is over.
    if (row.attempts > maxAttempts) return this.giveUp(worker, job, row, row.last_error ?? 'its instance stopped');
    const controller = new AbortController();
    worker.controllers.add(controller);
    const renew = setInterval(
      () => {
        const now = this.clock.now();
        this.store
          .extendLease(row.id, row.attempts, now + leaseMs, now)
          .then((held) => {
            if (!held) controller.abort(new Error('the job was claimed by another instance'));
          })
          .catch((err: unknown) => this.log?.warn({ err, job: row.id }, 'job queue: lease not renewed'));
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    renew.unref();
    try {
      await kind.run(job, controller.signal);
      await this.store.settle(row.id, row.attempts, { status: 'done' }, this.clock.now());
    } catch (err) {
      // Stopping: the lease ends and the job runs again elsewhere; nothing to record.
      if (this.stopped || controller.signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      if (row.attempts >= maxAttempts) return this.giveUp(worker, job, row, message);
      const delay = kind.retryDelayMs?.(row.attempts) ?? 5000 * row.attempts;
      await this.store
        .settle(
          row.id,
          row.attempts,
          { status: 'pending', runAt: this.clock.now() + delay, error: message },
          this.clock.now(),
        )
        .catch((e: unknown) => this.log?.warn({ err: e, job: row.id }, 'job queue: retry not recorded'));
    } finally {
      clearInterval(renew);
      worker.controllers.delete(controller);
    }
  }

  private async giveUp(worker: Worker, job: ClaimedJob, row: JobsTable, error: string): Promise<void> {
    try {
      await worker.kind.gaveUp?.(job, error);
      await this.store.settle(row.id, row.attempts, { status: 'failed', error }, this.clock.now());
    } catch (err) {
      this.log?.warn({ err, job: row.id }, 'job queue: a job that gave up was not recorded');
    }
  }
}
