// SQLite's automatic WAL checkpoint runs inside whichever commit crosses the
// threshold and fsyncs the database file there: on better-sqlite3 that blocks
// the event loop for every request in flight (measured: create p99 289 ms → 41 ms
// without it). The main connection turns it off; this worker thread, with its
// own connection to the same file, checkpoints in the background instead.
// PASSIVE never waits for readers or writers, so requests are not blocked.
//
// But under writes that never pause, no PASSIVE checkpoint copies the whole
// WAL (frames keep arriving while it runs), and SQLite starts the WAL over only
// after one has: the file grew without bound (2.3 GB after 50 s of creates),
// and with it the system time of every write. So once the WAL is past a limit,
// the group commit's writers wait, without blocking the event loop, for one
// checkpoint that copies everything (writeBarrier); the next write then starts
// the WAL from its beginning, and journal_size_limit trims the file.
import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from './load-sqlite.js';

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
// id: the request answered (checkpointNow); null for the timer's own checkpoints.
const checkpoint = (id) => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ type: 'checkpointed', result, id });
  } catch (err) {
    parentPort.postMessage({ type: 'error', message: String(err && err.message || err), id });
  }
};
const timer = setInterval(() => checkpoint(null), workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message && message.type === 'checkpoint') checkpoint(message.id);
  if (message === 'close') {
    clearInterval(timer);
    checkpoint(null);
    db.close();
    parentPort.close();
  }
});
`;

export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Frames the WAL may hold (as a checkpoint last counted) before writers wait for it to start over: 64 MiB of SQLite's 4 KiB pages. */
export const WAL_RESET_FRAMES = 16_384;
/** Longest the writers wait for that checkpoint. */
const BARRIER_TIMEOUT_MS = 1000;

export class WalCheckpointer {
  private readonly worker: Worker;
  /** Frames in the WAL at the last checkpoint's count; 0 once a barrier checkpoint ran, until the next count. */
  private walFrames = 0;
  private barrier: Promise<void> | null = null;
  /** checkpointNow() calls waiting for the answer to their own request (not a timer checkpoint still queued from before it). */
  private readonly waiting = new Map<number, (result: CheckpointResult) => void>();
  private lastId = 0;

  constructor(
    file: string,
    intervalMs = 1000,
    onError: (message: string) => void = () => {},
    private readonly resetFrames = WAL_RESET_FRAMES,
  ) {
    const driver = sqliteDriverPath();
    this.worker = new Worker(workerSource, { eval: true, workerData: { file, intervalMs, driver } });
    this.worker.unref();
    this.worker.on(
      'message',
      (message: { type: string; result?: CheckpointResult; message?: string; id: number | null }) => {
        if (message.type === 'error') onError(message.message ?? 'checkpoint failed');
        if (message.type === 'checkpointed' && message.result && message.id === null)
          this.walFrames = message.result.log;
        if (message.type === 'checkpointed' && message.result && message.id !== null) {
          this.waiting.get(message.id)?.(message.result);
          this.waiting.delete(message.id);
        }
      },
    );
    this.worker.on('error', (err) => onError(err.message));
  }

  /** Checkpoints now; resolves with SQLite's answer (frames in the WAL, frames copied). */
  checkpointNow(): Promise<CheckpointResult> {
    return new Promise((resolve) => {
      const id = ++this.lastId;
      this.waiting.set(id, resolve);
      this.worker.postMessage({ type: 'checkpoint', id });
    });
  }

  /**
   * For a writer about to write: null while the WAL is under the limit; past it, a promise of one checkpoint of
   * everything (shared by every writer that asks meanwhile), after which the next write starts the WAL over. A
   * write that slipped in meanwhile (outside the group commit) leaves the checkpoint short: the next count retries.
   */
  writeBarrier(): Promise<void> | null {
    if (this.barrier) return this.barrier;
    if (this.walFrames < this.resetFrames) return null;
    let timer: NodeJS.Timeout | undefined;
    // Writes never wait past BARRIER_TIMEOUT_MS: a worker that failed or is stuck must not stop them.
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, BARRIER_TIMEOUT_MS)));
    this.barrier = Promise.race([this.checkpointNow(), timeout]).then(() => {
      clearTimeout(timer);
      this.walFrames = 0;
      this.barrier = null;
    });
    return this.barrier;
  }

  /** A last checkpoint, then the worker's connection is closed. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      // Referenced again so the process waits for the last checkpoint instead of exiting under it.
      this.worker.ref();
      this.worker.once('exit', () => resolve());
      this.worker.postMessage('close');
    });
  }
}
