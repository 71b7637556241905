// Remembers for a moment what a credential resolved to, so a client's burst of
// requests costs one session (or API key) lookup instead of one each.
//
// Exact on this instance: every store that changes what a credential grants
// (logout, password reset, phone verification, 2FA, key deletion) calls
// userChanged() after its commit, which forgets that user's entries. Another
// instance learns of such a change within ttlMs, when its entry expires
// (AUTH_CACHE_MS; 0 turns the cache off). Only successful lookups are kept.
import type { Clock } from '../../lib/clock.js';

/** Told by writers when a user's credentials or account state changed. */
export interface UserChangeListener {
  userChanged(userId: string): void;
}

interface Entry<V> {
  value: V;
  userId: string;
  expiresAt: number;
}

export class CredentialCache<V> implements UserChangeListener {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly capacity = 10_000,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, userId: string, value: V): void {
    if (this.ttlMs <= 0) return;
    // Oldest first: a Map iterates in insertion order.
    if (this.entries.size >= this.capacity && !this.entries.has(key))
      this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, userId, expiresAt: this.clock.now() + this.ttlMs });
  }

  userChanged(userId: string): void {
    for (const [key, entry] of this.entries) if (entry.userId === userId) this.entries.delete(key);
  }
}

/** For stores built without a cache (tests, tools). */
export const noUserChangeListener: UserChangeListener = { userChanged: () => {} };
