// Reading files off the event loop. PDF, DOCX and HTML parsing, slicing and
// chunking are synchronous CPU work: on the event loop, one crafted 40 KB
// DOCX froze every other user for 52 s, and a zip bomb ran the whole process
// out of memory. Here each file is read in a worker thread with a heap limit
// (`resourceLimits`) and a time limit; a worker past either is stopped and
// replaced, and the file is refused by name. At most `workers` threads run;
// they start on first use and stop after `idleMs` without work, so a server
// that receives no files pays nothing for them.
import type { Worker } from 'node:worker_threads';
import type { ExtractionConfig } from '../../config.js';
import { startModuleWorker } from '../../lib/module-worker.js';
import { ExtractionError, type PrepareOptions, type PreparedText } from './extract.js';
import type { ExtractionAnswer, ExtractionJob } from './extract-worker.js';

/** What the service needs: a file's text, sliced and chunked. */
export interface FilePreparer {
  prepare(name: string, bytes: Buffer, declaredType?: string): Promise<PreparedText>;
  close(): Promise<void>;
}

interface Pending {
  name: string;
  bytes: Buffer;
  declaredType: string;
  resolve: (result: PreparedText) => void;
  reject: (error: Error) => void;
}

interface Running extends Pending {
  id: number;
  timer: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded the extractors and takes files. */
  ready: boolean;
  job: Running | null;
  idleTimer: NodeJS.Timeout | null;
}

export interface ExtractionPoolStats {
  /** Worker threads alive now. */
  workers: number;
  /** Workers started since the pool was made (on first use, after an idle stop, or to replace a stopped one). */
  started: number;
  /** Workers stopped because a file passed a limit (or the worker died). */
  stopped: number;
  /** Files waiting for a worker. */
  queued: number;
}

export class ExtractionPool implements FilePreparer {
  private readonly slots = new Set<Slot>();
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private started = 0;
  private stopped = 0;
  private closed = false;

  constructor(
    private readonly config: ExtractionConfig,
    private readonly chunking: Pick<PrepareOptions, 'sliceBytes' | 'chunkSize' | 'chunkOverlap'>,
  ) {}

  prepare(name: string, bytes: Buffer, declaredType = ''): Promise<PreparedText> {
    if (this.closed) return Promise.reject(new ExtractionError('too_complex', 'the server is shutting down'));
    return new Promise((resolve, reject) => {
      this.queue.push({ name, bytes, declaredType, resolve, reject });
      this.dispatch();
    });
  }

  stats(): ExtractionPoolStats {
    return { workers: this.slots.size, started: this.started, stopped: this.stopped, queued: this.queue.length };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0))
      pending.reject(new ExtractionError('too_complex', 'the server is shutting down'));
    const slots = [...this.slots];
    this.slots.clear();
    await Promise.all(
      slots.map((slot) => {
        if (slot.idleTimer) clearTimeout(slot.idleTimer);
        if (slot.job) {
          clearTimeout(slot.job.timer);
          slot.job.reject(new ExtractionError('too_complex', 'the server is shutting down'));
        }
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = [...this.slots].find((s) => s.ready && s.job === null);
      if (!slot) {
        // Start a worker for each file waiting beyond those starting already.
        const starting = [...this.slots].filter((s) => !s.ready).length;
        if (this.slots.size < this.config.workers && starting < this.queue.length) this.spawn();
        return;
      }
      this.run(slot, this.queue.shift()!);
    }
  }

  private run(slot: Slot, pending: Pending): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    const id = this.nextId++;
    const timer = setTimeout(
      () =>
        this.replace(
          slot,
          new ExtractionError(
            'too_complex',
            `took longer than ${this.config.timeoutMs / 1000} s to read (the limit per file)`,
          ),
        ),
      this.config.timeoutMs,
    );
    slot.job = { ...pending, id, timer };
    // A copy the worker owns (transferred, not cloned); the request keeps its own.
    const bytes = new Uint8Array(pending.bytes);
    const job: ExtractionJob = {
      id,
      name: pending.name,
      bytes,
      declaredType: pending.declaredType,
      options: {
        ...this.chunking,
        maxInflatedBytes: this.config.maxInflatedBytes,
        maxTextBytes: this.config.maxTextBytes,
      },
    };
    // Hold the process open while a file is read; an idle worker does not.
    slot.worker.ref();
    slot.worker.postMessage(job, [bytes.buffer]);
  }

  private finish(slot: Slot, answer: ExtractionAnswer): void {
    if ('ready' in answer) {
      slot.ready = true;
      slot.idleTimer = setTimeout(() => this.retire(slot), this.config.idleMs);
      slot.idleTimer.unref();
      return this.dispatch();
    }
    const job = slot.job;
    if (!job || job.id !== answer.id) return;
    clearTimeout(job.timer);
    slot.job = null;
    slot.worker.unref();
    if (answer.ok) job.resolve(answer.result);
    else
      job.reject(
        answer.kind === 'failed'
          ? new ExtractionError('unreadable', `could not be read (${answer.message})`)
          : new ExtractionError(answer.kind, answer.message),
      );
    slot.idleTimer = setTimeout(() => this.retire(slot), this.config.idleMs);
    slot.idleTimer.unref();
    this.dispatch();
  }

  /** Stops a worker past a limit (or dead), fails its file, and lets the next file start a fresh one. */
  private replace(slot: Slot, reason: Error): void {
    if (!this.slots.delete(slot)) return;
    this.stopped += 1;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    void slot.worker.terminate();
    if (job) {
      clearTimeout(job.timer);
      job.reject(reason);
    } else if (!slot.ready) {
      // It died while starting: a server fault, not the file's. The file
      // that was waiting for it fails (500) rather than waiting forever.
      this.queue.shift()?.reject(new Error(`the extraction worker could not start: ${reason.message}`));
    }
    this.dispatch();
  }

  private retire(slot: Slot): void {
    if (slot.job || !this.slots.delete(slot)) return;
    void slot.worker.terminate();
  }

  private spawn(): Slot {
    const worker = startWorker({
      maxOldGenerationSizeMb: this.config.memoryMb,
      maxYoungGenerationSizeMb: Math.min(32, Math.max(4, Math.floor(this.config.memoryMb / 8))),
      stackSizeMb: 4,
    });
    this.started += 1;
    const slot: Slot = { worker, ready: false, job: null, idleTimer: null };
    this.slots.add(slot);
    worker.unref();
    worker.on('message', (answer: ExtractionAnswer) => this.finish(slot, answer));
    worker.on('error', (error: Error & { code?: string }) => {
      const reason =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new ExtractionError(
              'too_complex',
              `needed more than ${this.config.memoryMb} MB of memory to read (the limit per file)`,
            )
          : new ExtractionError('too_complex', `stopped the reader (${error.message})`);
      this.replace(slot, reason);
    });
    worker.on('exit', () => this.replace(slot, new ExtractionError('too_complex', 'stopped the reader')));
    return slot;
  }
}

/** The worker: extract-worker beside this file (src/lib/module-worker.ts). */
function startWorker(resourceLimits: NonNullable<ConstructorParameters<typeof Worker>[1]>['resourceLimits']): Worker {
  return startModuleWorker(import.meta.url, 'extract-worker', { resourceLimits });
}
