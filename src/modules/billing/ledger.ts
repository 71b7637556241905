// The prepaid balance: sums and appends on the append-only credit_ledger, and
// reservations (holds) that are settled or refunded exactly once. A hold is a
// ledger debit written in the same transaction as its reservation row, so a
// crash leaves either both or neither; settleAbandoned() returns holds that
// were never closed.
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { BillingStore } from './store.js';

export class CreditLedger {
  private readonly cache = new Map<string, { cents: number; at: number }>();

  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
    /** How long GET /api/credits may answer from memory (spec 8: 60 s); changes made here drop the entry at once. */
    private readonly cacheMs: number,
  ) {}

  /** The balance read from the database now (money decisions use this). */
  async balanceCents(userId: string): Promise<number> {
    const cents = await this.store.balance(userId);
    this.cache.set(userId, { cents, at: this.clock.now() });
    return cents;
  }

  /** The balance, possibly up to `cacheMs` old when it changed on another instance. */
  async cachedBalanceCents(userId: string): Promise<number> {
    const hit = this.cache.get(userId);
    if (hit && this.clock.now() - hit.at < this.cacheMs) return hit.cents;
    if (this.cache.size > 10_000) this.cache.clear();
    return this.balanceCents(userId);
  }

  /** Drops the cached balance of a user whose ledger this instance changed. */
  forget(userId: string): void {
    this.cache.delete(userId);
  }

  async reserve(userId: string, cents: number, ref: string): Promise<void> {
    if (!Number.isSafeInteger(cents) || cents <= 0) throw invalidInput('a reservation is a whole number of cents > 0');
    checkRef(ref);
    const now = this.clock.now();
    await this.store.transaction(async (s) => {
      await s.lockUser(userId);
      if (await s.appendCovered({ userId, cents, reason: 'hold', ref: `hold:${ref}`, now })) {
        await s.insertReservation({
          ref,
          user_id: userId,
          cents,
          state: 'held',
          used_cents: null,
          created_at: now,
          closed_at: null,
        });
        return;
      }
      const existing = await s.entry(`hold:${ref}`);
      if (!existing) throw new AppError('insufficient_funds', `the prepaid balance does not cover ${formatUsd(cents)}`);
      if (existing.user_id !== userId || -Number(existing.cents) !== cents)
        throw new AppError('conflict', `reservation ${ref} exists with other terms`);
    });
    this.forget(userId);
  }

  settle(ref: string, usedCents: number): Promise<void> {
    if (!Number.isSafeInteger(usedCents) || usedCents < 0)
      return Promise.reject(invalidInput('usedCents must be a whole number ≥ 0'));
    return this.close(ref, 'settled', usedCents);
  }

  refund(ref: string): Promise<void> {
    return this.close(ref, 'refunded', 0);
  }

  /** Returns, whole, every hold older than `olderThanMs` that was never closed; how many it returned. */
  async settleAbandoned(olderThanMs: number): Promise<number> {
    let count = 0;
    for (;;) {
      const refs = await this.store.heldBefore(this.clock.now() - olderThanMs, 100);
      let closed = 0;
      for (const ref of refs) if (await this.closeOnce(ref, 'refunded', 0)) closed += 1;
      count += closed;
      if (refs.length < 100 || closed === 0) return count;
    }
  }

  private async close(ref: string, state: 'settled' | 'refunded', usedCents: number): Promise<void> {
    if (await this.closeOnce(ref, state, usedCents)) return;
    const reservation = await this.store.reservation(ref);
    if (!reservation) throw notFound('reservation');
    if (reservation.state === 'held')
      throw invalidInput(`usedCents ${usedCents} exceeds the hold of ${reservation.cents}`);
    // Closed before: settling or refunding twice changes nothing.
  }

  /** Closes a held reservation and returns what it does not use; false when it was not held (or does not cover usedCents). */
  private async closeOnce(ref: string, state: 'settled' | 'refunded', usedCents: number): Promise<boolean> {
    const now = this.clock.now();
    const closed = await this.store.transaction(async (s) => {
      const row = await s.closeReservation(ref, state, usedCents, now);
      if (!row) return null;
      const back = Number(row.cents) - usedCents;
      if (back > 0)
        await s.append({
          userId: row.user_id,
          cents: back,
          reason: state === 'settled' ? 'release' : 'refund',
          ref: `release:${ref}`,
          now,
        });
      return row.user_id;
    });
    if (closed) this.forget(closed);
    return closed !== null;
  }
}

function checkRef(ref: string): void {
  if (typeof ref !== 'string' || ref.length < 1 || ref.length > 200)
    throw invalidInput('a reference is 1 to 200 characters');
}

export const formatUsd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
