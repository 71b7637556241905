import type { RateLimitRule } from '../../config.js';
import { AppError, type ErrorCode } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { PlatformStore } from './store.js';

/** Fixed-window limits kept in the database, so they hold across instances. */
export class RateLimiter {
  constructor(
    private readonly store: PlatformStore,
    private readonly clock: Clock,
  ) {}

  /** Counts a hit on `key`; throws 429 with Retry-After once the rule's limit is passed. */
  async consume(key: string, rule: RateLimitRule): Promise<void> {
    const now = this.clock.now();
    const { count, windowStart } = await this.store.hitRateLimit(key, now, rule.windowMs);
    if (count > rule.limit) {
      const retryAfter = Math.max(1, Math.ceil((windowStart + rule.windowMs - now) / 1000));
      throw new AppError(
        'rate_limited',
        `too many requests; try again in ${retryAfter} s`,
        { retryAfter },
        { 'retry-after': String(retryAfter) },
      );
    }
  }

  /**
   * Counts `amount` (e.g. characters) against a quota of `rule.limit` per
   * window. A request that would pass the limit is refused (429 with `code`
   * and Retry-After) and not counted, so what is left stays usable; two
   * concurrent requests that together pass it may both be refused, never both
   * allowed. The counter is one row, shared by every instance.
   */
  async consumeAmount(key: string, amount: number, rule: RateLimitRule, code: ErrorCode, what: string): Promise<void> {
    const now = this.clock.now();
    const { count, windowStart } = await this.store.hitRateLimit(key, now, rule.windowMs, amount);
    if (count > rule.limit) {
      await this.store.unhitRateLimit(key, windowStart, amount);
      const retryAfter = Math.max(1, Math.ceil((windowStart + rule.windowMs - now) / 1000));
      const left = Math.max(0, rule.limit - (count - amount));
      throw new AppError(
        code,
        `${what}: ${amount} asked, ${left} of ${rule.limit} left; try again in ${retryAfter} s`,
        { retryAfter, limit: rule.limit, remaining: left },
        { 'retry-after': String(retryAfter) },
      );
    }
  }
}
