// Group commit for SQLite. SQLite runs one write transaction at a time, and
// most of a small transaction's cost is its commit: every page it touched is
// written to the WAL again. Write transactions that arrive while one is
// running therefore wait together and then run as savepoints of ONE
// transaction: each still succeeds or fails on its own (a failing one is
// rolled back to its savepoint), and they all commit at once.
//
// The wait is short: a write runs in the same event-loop turn's check phase
// (setImmediate), after the requests that arrived with it were read. Under
// load one network poll brings many requests, and their writes commit
// together; a lone write pays one turn and runs as a plain transaction.
// (Without that wait nothing ever batches: SQLite answers synchronously, so a
// whole transaction runs inside microtasks before the next request is read.)
// Between two writes of a batch, urgent work (src/lib/urgent-work.ts) gets to run.
// Before each batch, the connection's write barrier (its SqliteRunner's: the
// WAL checkpointer's, checkpointer.ts) may hold the writes until the WAL has
// been copied whole.
import type { Kysely, Transaction } from 'kysely';
import { runUrgentWork } from '../lib/urgent-work.js';
import { runStatement, type SqliteRunner, sqliteRunnerOf } from './prepared.js';
import type { Database } from './schema.js';

export type TransactionWork<T> = (trx: Transaction<Database>) => Promise<T>;

interface Pending {
  work: TransactionWork<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly runner: SqliteRunner | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    /** Most transactions committed together: bounds how long the last one waits for the others. */
    private readonly maxBatch = 64,
  ) {
    this.runner = sqliteRunnerOf(db);
  }

  /** Runs `work` in a transaction (possibly shared with concurrent ones); settles after the commit. */
  run<T>(work: TransactionWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const held = this.runner?.writeBarrier();
        if (held) await held;
        await this.runBatch(this.queue.splice(0, this.maxBatch));
        // Batches that the last one's callers queued run in this same turn (SQLite answers synchronously): the
        // calls that end together chain their whole accounting here, one-write batches included.
        runUrgentWork();
      }
    } finally {
      this.scheduled = false;
    }
  }

  private async runBatch(batch: Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.db.transaction().execute(only.work).then(only.resolve, only.reject);
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const item of batch) {
          // The batch runs as one chain of microtasks: time-critical work (voice frames due) goes out between items (and after the batch: drain).
          if (outcomes.length > 0) runUrgentWork();
          outcomes.push(await runInSavepoint(trx, item.work));
        }
      });
    } catch (error) {
      // Nothing committed: an item that had failed on its own keeps its error, the others get the commit's.
      batch.forEach((item, i) => item.reject(outcomes[i]?.ok === false ? outcomes[i].error : error));
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}

async function runInSavepoint(trx: Transaction<Database>, work: TransactionWork<unknown>): Promise<Outcome> {
  // On SQLite's connection the statements run synchronously: awaited only when Kysely runs them.
  let pending = runStatement(trx, 'savepoint grouped_write');
  if (pending) await pending;
  try {
    const value = await work(trx);
    pending = runStatement(trx, 'release grouped_write');
    if (pending) await pending;
    return { ok: true, value };
  } catch (error) {
    // If SQLite already rolled the whole transaction back (disk full, I/O error), this throws and the batch fails.
    pending = runStatement(trx, 'rollback to grouped_write');
    if (pending) await pending;
    pending = runStatement(trx, 'release grouped_write');
    if (pending) await pending;
    return { ok: false, error };
  }
}
