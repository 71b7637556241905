// Periodically deletes rows that can no longer matter: expired codes, reset
// tokens, sign-in flows, token revocations and old rate-limit windows. Each
// module supplies its own purge (its store owns the SQL).
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.js';

export type Purge = (now: number) => Promise<void>;

export class Housekeeping {
  private timer: NodeJS.Timeout | null = null;
  constructor(
    private readonly purges: Record<string, Purge>,
    private readonly clock: Clock,
  ) {}

  /** Runs every purge once; a failing one is logged and does not stop the others. */
  async runOnce(log?: FastifyBaseLogger): Promise<void> {
    const now = this.clock.now();
    for (const [name, purge] of Object.entries(this.purges)) {
      try {
        await purge(now);
      } catch (err) {
        log?.warn({ err }, `housekeeping: ${name} failed`);
      }
    }
  }

  start(intervalMs: number, log: FastifyBaseLogger): void {
    this.stop();
    this.timer = setInterval(() => void this.runOnce(log), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
