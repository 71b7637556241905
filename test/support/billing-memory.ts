// The in-memory BillingAccount (our own interface, src/modules/billing/account.ts)
// for tests of areas that spend money (telephony, connect), where a test steers
// what billing answers. It follows the interface's rules: cards on file,
// subscriptions idempotent by ref (and needing a card), an append-only ledger
// with unique refs, holds settled once, usage idempotent by ref, allowance =
// the plan's included quantity minus usage; and switches that make the next
// start, cancel, settle or refund fail the way the provider or database can.
import { AppError, notFound } from '../../src/http/errors.js';
import { type Clock, systemClock } from '../../src/lib/clock.js';
import type { BillingAccount, BillingPeriod, UsageKind } from '../../src/modules/billing/account.js';

interface Hold {
  userId: string;
  cents: number;
  createdAt: number;
  state: 'open' | 'settled' | 'refunded';
  keptCents: number;
}

export interface MemorySubscription {
  id: string;
  userId: string;
  ref: string;
  description: string;
  monthlyCents: number;
  status: 'active' | 'canceled';
}

export class MemoryBillingAccount implements BillingAccount {
  readonly ledger: Array<{ userId: string; cents: number; ref: string }> = [];
  readonly holds = new Map<string, Hold>();
  readonly usage = new Map<string, { userId: string; kind: UsageKind; quantity: number }>();
  private readonly included = new Map<string, Partial<Record<UsageKind, number>>>();
  readonly cards = new Set<string>();
  readonly subscriptions = new Map<string, MemorySubscription>();
  private failStarts = 0;
  private failCancels = 0;
  private seq = 0;

  /** When set, every read yields to the event loop first, as a database round trip does (lets concurrent callers interleave). */
  slowReads = false;

  /** `checkoutBase`: where cardCheckoutUrl points (`{checkoutBase}/setup-{userId}`). */
  constructor(
    private readonly clock: Clock = systemClock,
    private readonly checkoutBase = 'http://127.0.0.1/api/sandbox/checkout',
  ) {}

  private async roundTrip(): Promise<void> {
    if (this.slowReads) await new Promise((resolve) => setTimeout(resolve, 2));
  }

  /** Test set-up: prepaid credit. */
  fund(userId: string, cents: number, ref = `fund:${userId}:${this.ledger.length}`): void {
    this.append(userId, cents, ref);
  }

  /** Test set-up: the plan's included quantity of a kind. */
  include(userId: string, kind: UsageKind, quantity: number): void {
    this.included.set(userId, { ...this.included.get(userId), [kind]: quantity });
  }

  usedOf(userId: string, kind: UsageKind): number {
    let total = 0;
    for (const u of this.usage.values()) if (u.userId === userId && u.kind === kind) total += u.quantity;
    return total;
  }

  /** Test set-up: a card on file. */
  addCard(userId: string): void {
    this.cards.add(userId);
  }

  /** The next `count` subscription starts fail as the payment provider can (502). */
  failNextStart(count = 1): void {
    this.failStarts += count;
  }

  /** The next `count` cancellations fail as the payment provider can (502). */
  failNextCancel(count = 1): void {
    this.failCancels += count;
  }

  activeFor(userId: string): MemorySubscription[] {
    return [...this.subscriptions.values()].filter((s) => s.userId === userId && s.status === 'active');
  }

  async hasCard(userId: string): Promise<boolean> {
    return this.cards.has(userId);
  }

  async cardCheckoutUrl(userId: string): Promise<string> {
    return `${this.checkoutBase}/setup-${userId}`;
  }

  async startSubscription(
    userId: string,
    item: { ref: string; description: string; monthlyCents: number },
  ): Promise<{ subscriptionId: string }> {
    const existing = [...this.subscriptions.values()].find((s) => s.ref === item.ref);
    if (existing) {
      if (existing.userId !== userId) throw new AppError('conflict', 'this reference belongs to another subscription');
      return { subscriptionId: existing.id };
    }
    if (!this.cards.has(userId))
      throw new AppError('payment_method_required', 'a card on file is required: complete the checkout at url', {
        url: await this.cardCheckoutUrl(userId),
      });
    if (this.failStarts > 0) {
      this.failStarts -= 1;
      throw new AppError('provider_error', 'the payment provider declined the subscription');
    }
    const id = `sub_memory_${++this.seq}`;
    this.subscriptions.set(id, {
      id,
      userId,
      ref: item.ref,
      description: item.description,
      monthlyCents: item.monthlyCents,
      status: 'active',
    });
    return { subscriptionId: id };
  }

  async cancelSubscription(userId: string, subscriptionId: string): Promise<void> {
    const sub = this.subscriptions.get(subscriptionId);
    if (!sub || sub.userId !== userId) throw notFound('subscription');
    if (sub.status === 'canceled') return;
    if (this.failCancels > 0) {
      this.failCancels -= 1;
      throw new AppError('provider_error', 'the payment provider could not cancel the subscription');
    }
    sub.status = 'canceled';
  }

  async balanceCents(userId: string): Promise<number> {
    await this.roundTrip();
    return this.balanceNow(userId);
  }

  private balanceNow(userId: string): number {
    return this.ledger.filter((e) => e.userId === userId).reduce((sum, e) => sum + e.cents, 0);
  }

  async reserve(userId: string, cents: number, ref: string): Promise<void> {
    if (this.holds.has(ref)) return;
    if (!Number.isInteger(cents) || cents <= 0)
      throw new Error(`reserve: cents must be a positive whole number (got ${cents})`);
    // Checked and debited without yielding: atomic, as billing's ledger statement is.
    if (this.balanceNow(userId) < cents)
      throw new AppError('insufficient_funds', 'the prepaid balance does not cover this');
    this.holds.set(ref, { userId, cents, createdAt: this.clock.now(), state: 'open', keptCents: 0 });
    this.append(userId, -cents, `hold:${ref}`);
  }

  /** When set, the next settle or refund fails as an unreachable billing database would (nothing changes). */
  failNextClose = false;

  async settle(ref: string, usedCents: number): Promise<void> {
    const hold = this.openHold(ref);
    if (!hold) return; // closed before: settling twice changes nothing, as billing's ledger does
    if (!Number.isInteger(usedCents) || usedCents < 0 || usedCents > hold.cents)
      throw new Error(`settle ${ref}: ${usedCents} is not within the hold of ${hold.cents}`);
    hold.state = 'settled';
    hold.keptCents = usedCents;
    if (hold.cents > usedCents) this.append(hold.userId, hold.cents - usedCents, `release:${ref}`);
  }

  async refund(ref: string): Promise<void> {
    const hold = this.openHold(ref);
    if (!hold) return;
    hold.state = 'refunded';
    this.append(hold.userId, hold.cents, `release:${ref}`);
  }

  async settleAbandoned(olderThanMs: number): Promise<number> {
    const before = this.clock.now() - olderThanMs;
    let count = 0;
    for (const [ref, hold] of this.holds) {
      if (hold.state === 'open' && hold.createdAt < before) {
        await this.refund(ref);
        count++;
      }
    }
    return count;
  }

  async recordUsage(userId: string, kind: UsageKind, quantity: number, ref: string): Promise<void> {
    const key = `${kind}:${ref}`;
    if (!this.usage.has(key)) this.usage.set(key, { userId, kind, quantity });
  }

  async currentPeriod(userId: string): Promise<BillingPeriod> {
    const now = new Date(this.clock.now());
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    return { planKey: this.included.has(userId) ? 'starter' : null, start, end };
  }

  async remainingAllowance(userId: string, kind: UsageKind): Promise<number> {
    return (await this.allowances(userId, [kind])).remaining[kind];
  }

  async allowances<K extends UsageKind>(
    userId: string,
    kinds: readonly K[],
  ): Promise<{ period: BillingPeriod; remaining: Record<K, number> }> {
    await this.roundTrip();
    const remaining = Object.fromEntries(
      kinds.map((kind) => [kind, Math.max(0, (this.included.get(userId)?.[kind] ?? 0) - this.usedOf(userId, kind))]),
    ) as Record<K, number>;
    return { period: await this.currentPeriod(userId), remaining };
  }

  /** The open hold of `ref`; null when it was closed before; throws for an unknown ref or an injected failure. */
  private openHold(ref: string): Hold | null {
    if (this.failNextClose) {
      this.failNextClose = false;
      throw new Error('billing database unreachable (injected)');
    }
    const hold = this.holds.get(ref);
    if (!hold) throw new Error(`no hold under ${ref}`);
    return hold.state === 'open' ? hold : null;
  }

  private append(userId: string, cents: number, ref: string): void {
    if (this.ledger.some((e) => e.ref === ref)) throw new Error(`ledger ref ${ref} used twice`);
    this.ledger.push({ userId, cents, ref });
  }
}
