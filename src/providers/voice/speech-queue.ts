// The local speech queue (docs/decisions/personas.md "Local speech is fair"):
// one per process, in front of espeak-ng. Two classes of work share it. Speech
// for calls is served first and is never refused because of previews or of
// other calls: its room follows the calls (a few sentences each, since a call
// speaks one sentence at a time), so every admitted call can always speak.
// Previews only use spare room, within a share of their own and a small cap
// per account, so one account cannot fill the queue for everyone.
import { AppError } from '../../http/errors.js';

/** `call`: a sentence of a live call; `preview`: a persona preview (free, asked for by an account). */
export type SpeechPriority = 'call' | 'preview';

/** Who a piece of local speech is for. */
export interface SpeechRequest {
  priority: SpeechPriority;
  /** The account a preview is spoken for: each account has a cap of its own. */
  account?: string;
  /** The call a call job speaks for (its session id): each call has room of its own. Untagged call jobs share one. */
  call?: string;
  /** Withdraws a job still waiting (a call that ended, a sentence cut off); a running job finishes. */
  signal?: AbortSignal;
}

export interface SpeechQueueLimits {
  /** Jobs run at once. */
  concurrency: number;
  /**
   * Call jobs queued or running for one call; more are refused (429). There
   * is no total for calls: how many calls run is decided where calls are
   * admitted, and each speaks one sentence at a time (a cut one may still be
   * finishing), so the call room grows and shrinks with the calls.
   */
  maxPendingPerCall: number;
  /** Jobs of both classes queued or running below which a preview is admitted: the spare room previews may use. */
  spareRoom: number;
  /** Preview jobs queued or running, all accounts together; also only while all jobs stay under spareRoom. */
  maxPreviews: number;
  /** Preview jobs queued or running for one account. */
  maxPreviewsPerAccount: number;
  /** Previews running at once; below concurrency when it is above 1, so a call's sentence finds a free slot. */
  maxRunningPreviews: number;
}

/** Defaults for a queue running `concurrency` jobs at once: 4 per call, previews while under 8 jobs, 4 previews, 2 per account. */
export function defaultSpeechQueueLimits(concurrency: number): SpeechQueueLimits {
  return {
    concurrency,
    maxPendingPerCall: 4,
    spareRoom: 8,
    maxPreviews: 4,
    maxPreviewsPerAccount: 2,
    maxRunningPreviews: Math.max(1, concurrency - 1),
  };
}

interface Waiting {
  priority: SpeechPriority;
  /** The account of a preview, the call of a call job: whose room the job holds. */
  owner: string;
  start(): void;
  fail(reason: Error): void;
}

const busy = (message: string) => new AppError('rate_limited', message, undefined, { 'retry-after': '2' });

export class SpeechQueue {
  private readonly waiting: Record<SpeechPriority, Waiting[]> = { call: [], preview: [] };
  /** Queued or running, per class. */
  private readonly pending: Record<SpeechPriority, number> = { call: 0, preview: 0 };
  private readonly running: Record<SpeechPriority, number> = { call: 0, preview: 0 };
  /** Jobs queued or running per owner: a preview's account (key `preview:`), a call (key `call:`). */
  private readonly byOwner = new Map<string, number>();

  constructor(readonly limits: SpeechQueueLimits) {}

  /**
   * Runs `task` when its turn comes: calls before previews, each class in
   * order of arrival. Refuses at once (429 `rate_limited`, Retry-After 2)
   * what the limits do not admit.
   */
  run<T>(request: SpeechRequest, task: () => Promise<T>): Promise<T> {
    const { priority } = request;
    const owner = `${priority}:${(priority === 'call' ? request.call : request.account) ?? ''}`;
    const refusal = this.refusal(priority, owner);
    if (refusal) return Promise.reject(refusal);
    if (request.signal?.aborted) return Promise.reject(withdrawn());
    this.pending[priority]++;
    this.byOwner.set(owner, (this.byOwner.get(owner) ?? 0) + 1);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (this.remove(job)) job.fail(withdrawn());
      };
      const job: Waiting = {
        priority,
        owner,
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

  private refusal(priority: SpeechPriority, owner: string): AppError | null {
    const { maxPendingPerCall, spareRoom, maxPreviews, maxPreviewsPerAccount } = this.limits;
    const held = this.byOwner.get(owner) ?? 0;
    if (priority === 'call')
      return held >= maxPendingPerCall
        ? busy(`${maxPendingPerCall} sentences of this call are waiting for local speech: try again in a moment`)
        : null;
    if (held >= maxPreviewsPerAccount) {
      return busy(`${maxPreviewsPerAccount} of your local previews are being spoken: wait for them to finish`);
    }
    if (this.pending.preview >= maxPreviews || this.pending.call + this.pending.preview >= spareRoom) {
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
    const left = (this.byOwner.get(job.owner) ?? 1) - 1;
    if (left > 0) this.byOwner.set(job.owner, left);
    else this.byOwner.delete(job.owner);
  }
}

function withdrawn(): Error {
  const err = new Error('the speech was no longer wanted');
  err.name = 'AbortError';
  return err;
}
