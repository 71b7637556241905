// "Accepted once, even across instances" for every token the service issues
// or accepts: phone price tokens, signed-payload jtis, temporary-session keys.
// A token is spent by inserting (purpose, id); the primary key lets exactly
// one of any number of concurrent spenders win.
import type { Clock } from '../../lib/clock.js';
import type { SingleUseStore } from './single-use-store.js';

export type SingleUsePurpose =
  | 'phone-price'
  | 'signed-payload'
  | 'temporary-session'
  | 'media-stream'
  | 'event-ticket'
  | 'inbound-call';

export class SingleUseTokens {
  constructor(
    private readonly store: SingleUseStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Spends the token; false when it was spent before. `expiresAt` (ms) is when
   * the token stops being accepted anyway; the record is kept until then.
   * `id` names the token within its purpose: a string, or parts joined safely.
   */
  spend(purpose: SingleUsePurpose, id: string | readonly string[], expiresAt: number): Promise<boolean> {
    return this.store.insertIfAbsent({ purpose, id: tokenId(id), expires_at: expiresAt, used_at: this.clock.now() });
  }

  /** Makes a spent token usable again (its use did nothing, e.g. a purchase the provider refused). */
  restore(purpose: SingleUsePurpose, id: string | readonly string[]): Promise<void> {
    return this.store.delete(purpose, tokenId(id));
  }

  /** Housekeeping: forgets tokens past their expiry (they are refused on expiry anyway). */
  purgeExpired(now: number): Promise<void> {
    return this.store.deleteExpired(now);
  }
}

const tokenId = (id: string | readonly string[]): string => (typeof id === 'string' ? id : JSON.stringify(id));
