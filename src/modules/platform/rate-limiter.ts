import type { RateLimitRule } from '../../config.js';
import { AppError } from '../../http/errors.js';
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
      throw new AppError('rate_limited', `too many requests; try again in ${retryAfter} s`, { retryAfter }, { 'retry-after': String(retryAfter) });
    }
  }
}
