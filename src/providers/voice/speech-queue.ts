// The local speech queue (docs/decisions/personas.md "Local speech is fair"):
// one per process, in front of espeak-ng. Two classes of work share it. Speech
// for calls is served first and is never refused because of previews;
// previews only use spare capacity, within a share of their own and a small
// cap per account, so one account cannot fill the queue for everyone.
import { AppError } from '../../http/errors.js';

/** `call`: a sentence of a live call; `preview`: a persona preview (free, asked for by an account). */
export type SpeechPriority = 'call' | 'preview';

/** Who a piece of local speech is for. */
export interface SpeechRequest {
  priority: SpeechPriority;
  /** The account a preview is spoken for: each account has a cap of its own. */
  account?: string;
  /** Withdraws a job still waiting (a call that ended, a sentence cut off); a running job finishes. */
  signal?: AbortSignal;
}

export interface SpeechQueueLimits {
  /** Jobs run at once. */
  concurrency: number;
  /** Call jobs queued or running; more are refused (429). Previews never count against it. */
  maxPending: number;
  /** Preview jobs queued or running, all accounts together; also only while calls and previews together stay under maxPending. */
  maxPreviews: number;
  /** Preview jobs queued or running for one account. */
  maxPreviewsPerAccount: number;
  /** Previews running at once; below concurrency when it is above 1, so a call's sentence finds a free slot. */
  maxRunningPreviews: number;
}

/** Defaults for a queue running `concurrency` jobs at once: 8 pending calls, half of that for previews, 2 per account. */
export function defaultSpeechQueueLimits(concurrency: number): SpeechQueueLimits {
  return {
    concurrency,
    maxPending: 8,
    maxPreviews: 4,
    maxPreviewsPerAccount: 2,
    maxRunningPreviews: Math.max(1, concurrency - 1),
  };
}

interface Waiting {
  priority: SpeechPriority;
  account: string;
  start(): void;
  fail(reason: Error): void;
}

const busy = (message: string) => new AppError('rate_limited', message, undefined, { 'retry-after': '2' });

export class SpeechQueue {
  private readonly waiting: Record<SpeechPriority, Waiting[]> = { call: [], preview: [] };
  /** Queued or running, per class. */
  private readonly pending: Record<SpeechPriority, number> = { call: 0, preview: 0 };
  private readonly running: Record<SpeechPriority, number> = { call: 0, preview: 0 };
  private readonly previewsByAccount = new Map<string, number>();

  constructor(readonly limits: SpeechQueueLimits) {}

  /**
   * Runs `task` when its turn comes: calls before previews, each class in
   * order of arrival. Refuses at once (429 `rate_limited`, Retry-After 2)
   * what the limits do not admit.
   */
  run<T>(request: SpeechRequest, task: () => Promise<T>): Promise<T> {
    const { priority } = request;
    const account = request.account ?? '';
    const refusal = this.refusal(priority, account);
    if (refusal) return Promise.reject(refusal);
    if (request.signal?.aborted) return Promise.reject(withdrawn());
    this.pending[priority]++;
    if (priority === 'preview') this.previewsByAccount.set(account, (this.previewsByAccount.get(account) ?? 0) + 1);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (this.remove(job)) job.fail(withdrawn());
      };
      const job: Waiting = {
        priority,
        account,
        start: () => {
          request.signal?.removeEventListener('abort', onAbort);
          this.running[priority]++;
          let result: Promise<T>;
          try {
            result = task();
          } catch (err) {
            result = Promise.reject(err);
          }
          // The slot is given back before the caller hears, so a caller that asks again at once is not refused.
          const finish = () => {
            this.running[priority]--;
            this.release(job);
            this.pump();
          };
          result.then(
            (value) => {
              finish();
              resolve(value);
            },
            (err: unknown) => {
              finish();
              reject(err);
            },
          );
        },
        fail: (reason) => {
          request.signal?.removeEventListener('abort', onAbort);
          this.release(job);
          reject(reason);
        },
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting[priority].push(job);
      this.pump();
    });
  }

  /** Jobs queued or running, per class (for tests and the log). */
  size(): { calls: number; previews: number } {
    return { calls: this.pending.call, previews: this.pending.preview };
  }

  /** Fails every job still waiting (shutdown); running ones finish or fail on their own. */
  clear(reason: Error): void {
    for (const priority of ['call', 'preview'] as const) {
      const jobs = this.waiting[priority].splice(0);
      for (const job of jobs) job.fail(reason);
    }
  }

  private refusal(priority: SpeechPriority, account: string): AppError | null {
    const { maxPending, maxPreviews, maxPreviewsPerAccount } = this.limits;
    if (priority === 'call')
      return this.pending.call >= maxPending ? busy('local speech is busy: try again in a moment') : null;
    if ((this.previewsByAccount.get(account) ?? 0) >= maxPreviewsPerAccount) {
      return busy(`${maxPreviewsPerAccount} of your local previews are being spoken: wait for them to finish`);
    }
    if (this.pending.preview >= maxPreviews || this.pending.call + this.pending.preview >= maxPending) {
      return busy('local speech is busy (calls go first): try the preview again in a moment');
    }
    return null;
  }

  /** Starts what the free slots allow: waiting calls first, then previews within their running share. */
  private pump(): void {
    const { concurrency, maxRunningPreviews } = this.limits;
    while (this.running.call + this.running.preview < concurrency) {
      const next =
        this.waiting.call.shift() ??
        (this.running.preview < maxRunningPreviews ? this.waiting.preview.shift() : undefined);
      if (!next) return;
      next.start();
    }
  }

  private remove(job: Waiting): boolean {
    const queue = this.waiting[job.priority];
    const index = queue.indexOf(job);
    if (index < 0) return false;
    queue.splice(index, 1);
    return true;
  }

  private release(job: Waiting): void {
    this.pending[job.priority]--;
    if (job.priority !== 'preview') return;
    const left = (this.previewsByAccount.get(job.account) ?? 1) - 1;
    if (left > 0) this.previewsByAccount.set(job.account, left);
    else this.previewsByAccount.delete(job.account);
  }
}

function withdrawn(): Error {
  const err = new Error('the speech was no longer wanted');
  err.name = 'AbortError';
  return err;
}
