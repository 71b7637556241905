// Sends due webhook deliveries. Each instance runs one worker; deliveries are
// claimed with one conditional update (see WebhookStore.claimDue), so several
// instances never send one delivery at the same time, and a delivery claimed
// by an instance that died becomes due again when its lease ends. The queue is
// in the database, so a restart loses nothing.
import { OutboundHttpError } from '../../lib/outbound-http.js';
import type { Clock } from '../../lib/clock.js';
import { signWebhook } from '../../lib/standard-webhooks.js';
import type { SendWebhook } from './send.js';
import type { WebhookStore } from './store.js';
import type { WebhookDeliveriesTable } from './tables.js';

/** Deliveries are retried for this long after they were created, then marked failed. */
export const RETRY_WINDOW_MS = 24 * 3600_000;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 3600_000;

/**
 * Wait before the attempt after `attempts` failed ones: 5 s doubling up to
 * 1 h, each scaled by a random factor from 0.75 to 1.25 (jitter, so a
 * receiver that was down is not hit by every retry at the same instant).
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
  return Math.round(base * (0.75 + 0.5 * random()));
}

export interface WorkerOptions {
  timeoutMs: number;
  pollIntervalMs: number;
  allowPrivate: boolean;
  /** Attempts running at once on this instance. */
  maxInFlight?: number;
  random?: () => number;
}

export interface WorkerDeps {
  store: WebhookStore;
  /** The secrets to sign a user's deliveries with now (current first). */
  signingSecrets: (userId: string) => Promise<string[]>;
  send: SendWebhook;
  clock: Clock;
  /** Called after each failed attempt (metrics). */
  onAttemptFailed?: () => void;
}

type WarnLog = { warn(obj: unknown, msg: string): void };

export class WebhookWorker {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private stopped = true;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxInFlight: number;
  private log: WarnLog | null = null;
  constructor(
    private readonly deps: WorkerDeps,
    private readonly options: WorkerOptions,
  ) {
    this.maxInFlight = options.maxInFlight ?? 64;
  }

  /** Where failures of the worker itself (not of deliveries) are logged. */
  reportErrorsTo(log: WarnLog): void {
    this.log = log;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  /** Stops claiming and waits for the attempts under way to finish and be recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.whenIdle();
  }

  /** Resolves once no claim is being made and every attempt under way has been recorded. */
  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0 || this.running) {
      await Promise.allSettled([...this.inFlight]);
      if (this.running) await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Looks for due deliveries now (after an enqueue, after an attempt ended, on the poll). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.claimLoop().finally(() => {
      this.running = false;
      if (this.stopped) return;
      if (this.again) return this.wake();
      this.schedulePoll();
    });
  }

  private schedulePoll(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  private async claimLoop(): Promise<void> {
    do {
      this.again = false;
      const free = this.maxInFlight - this.inFlight.size;
      if (free <= 0 || this.stopped) return;
      const now = this.deps.clock.now();
      let claimed: WebhookDeliveriesTable[];
      try {
        claimed = await this.deps.store.claimDue(now, now + this.options.timeoutMs + 30_000, Math.min(free, 32));
      } catch (err) {
        this.log?.warn({ err }, 'webhook worker: claiming deliveries failed');
        return;
      }
      for (const delivery of claimed) {
        const attempt = this.attempt(delivery).finally(() => {
          this.inFlight.delete(attempt);
          this.wake();
        });
        this.inFlight.add(attempt);
      }
      if (claimed.length === Math.min(free, 32)) this.again = true;
    } while (this.again && !this.stopped);
  }

  /** One attempt of a claimed delivery, then its outcome: delivered, retry later, or failed for good. */
  private async attempt(delivery: WebhookDeliveriesTable): Promise<void> {
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const secrets = await this.deps.signingSecrets(delivery.user_id);
      if (secrets.length === 0) throw new Error('the user has no webhook secret');
      const headers = signWebhook(secrets, delivery.id, this.deps.clock.now(), delivery.body);
      statusCode = (
        await this.deps.send(delivery.url, headers, delivery.body, {
          timeoutMs: this.options.timeoutMs,
          allowPrivate: this.options.allowPrivate,
        })
      ).statusCode;
      if (statusCode < 200 || statusCode > 299) error = `HTTP ${statusCode}`;
    } catch (err) {
      error = describe(err);
    }
    if (error !== null) this.deps.onAttemptFailed?.();
    const now = this.deps.clock.now();
    const deadline = Number(delivery.created_at) + RETRY_WINDOW_MS;
    const outcome =
      error === null
        ? { status: 'delivered' as const, nextAttemptAt: now }
        : now >= deadline
          ? { status: 'failed' as const, nextAttemptAt: now }
          : {
              status: 'pending' as const,
              nextAttemptAt: Math.min(now + retryDelayMs(delivery.attempts, this.options.random), deadline),
            };
    try {
      await this.deps.store.finishAttempt(delivery.id, delivery.attempts, {
        ...outcome,
        statusCode,
        error: error?.slice(0, 500) ?? null,
        now,
      });
    } catch (err) {
      // The lease ends and the delivery is attempted again (receivers deduplicate on webhook-id).
      this.log?.warn({ err }, 'webhook worker: recording an attempt failed');
    }
  }
}

function describe(err: unknown): string {
  // The outbound client's errors say what happened (refused address, timeout, network failure) in their message.
  if (err instanceof OutboundHttpError) return err.reason === 'timeout' ? 'timed out' : err.message;
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  return e?.cause?.code ? `${e.message}: ${e.cause.code}` : (e?.message ?? String(err));
}
