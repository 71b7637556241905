// SQLite's analytics reads off the event loop, two at a time. The fold of an
// account's 100,000 calls is ~50 ms of CPU in one synchronous statement: on
// the server's connection it held every other request that long, and it used
// one core of two. Here worker threads (analytics-reader-worker.ts), each
// with a read-only connection to the same file, run the fold queries; the
// analytics store sends a range longer than a day as two halves at once, as
// it does on PostgreSQL. The threads start on first use and stop after
// `idleMs` without work, so a server nobody asks for analytics pays nothing.
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../lib/module-worker.js';
import type { FoldAnswer, FoldRequest } from './analytics-reader-worker.js';

interface Pending {
  resolve: (folded: string) => void;
  reject: (error: Error) => void;
}

interface Reader {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class AnalyticsReaders {
  private readers: Reader[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly size = 2,
    private readonly idleMs = 60_000,
  ) {}

  /** The folded JSON text of one fold query (its SQL and parameters, compiled by the store). */
  fold(sql: string, parameters: readonly unknown[]): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the analytics readers are closed'));
    const reader = this.leastBusy();
    const id = this.nextId++;
    return new Promise<string>((resolve, reject) => {
      reader.pending.set(id, { resolve, reject });
      // A thread with work holds the process open (a script awaiting a fold); an idle one does not.
      reader.worker.ref();
      reader.worker.postMessage({ id, sql, parameters: [...parameters] } satisfies FoldRequest);
    }).finally(() => this.armIdleStop());
  }

  /** Worker threads alive now. */
  get running(): number {
    return this.readers.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stopAll();
  }

  private leastBusy(): Reader {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const idle = this.readers.find((r) => r.pending.size === 0);
    if (idle) return idle;
    if (this.readers.length < this.size) return this.start();
    return this.readers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  private start(): Reader {
    const worker = startModuleWorker(import.meta.url, 'analytics-reader-worker', { workerData: { file: this.file } });
    const reader: Reader = { worker, pending: new Map() };
    const fail = (error: Error) => {
      this.readers = this.readers.filter((r) => r !== reader);
      for (const p of reader.pending.values()) p.reject(error);
      reader.pending.clear();
    };
    worker.on('message', (answer: FoldAnswer) => {
      const p = reader.pending.get(answer.id);
      if (!p) return;
      reader.pending.delete(answer.id);
      if (reader.pending.size === 0) reader.worker.unref();
      if ('error' in answer) p.reject(new Error(`analytics read: ${answer.error}`));
      else p.resolve(answer.folded);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the analytics reader stopped (exit code ${code})`)));
    worker.unref();
    this.readers.push(reader);
    return reader;
  }

  private armIdleStop(): void {
    if (this.closed || this.readers.some((r) => r.pending.size > 0)) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.stopAll(), this.idleMs);
    this.idleTimer.unref();
  }

  private async stopAll(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const readers = this.readers;
    this.readers = [];
    await Promise.all(readers.map((r) => r.worker.terminate()));
  }
}
