// An in-memory BillingAccount (our own interface, src/modules/billing/account.ts)
// for telephony tests while billing is built elsewhere: cards on file,
// subscriptions idempotent by ref, and switches that make the next start or
// cancel fail the way the payment provider can.
import { AppError } from '../../src/http/errors.js';
import type { BillingAccount, BillingPeriod, UsageKind } from '../../src/modules/billing/account.js';

export interface FakeSubscription {
  id: string;
  userId: string;
  ref: string;
  description: string;
  monthlyCents: number;
  status: 'active' | 'canceled';
}

export class FakeBillingAccount implements BillingAccount {
  readonly cards = new Set<string>();
  readonly subscriptions = new Map<string, FakeSubscription>();
  readonly calls: string[] = [];
  private failStarts = 0;
  private failCancels = 0;
  private readonly ledger: Array<{ userId: string; cents: number; ref: string }> = [];
  private readonly usage: Array<{ userId: string; kind: UsageKind; quantity: number; ref: string }> = [];
  private seq = 0;

  constructor(private readonly checkoutBase = 'http://127.0.0.1/api/sandbox/checkout') {}

  addCard(userId: string): void {
    this.cards.add(userId);
  }
  failNextStart(count = 1): void {
    this.failStarts += count;
  }
  failNextCancel(count = 1): void {
    this.failCancels += count;
  }
  activeFor(userId: string): FakeSubscription[] {
    return [...this.subscriptions.values()].filter((s) => s.userId === userId && s.status === 'active');
  }

  async hasCard(userId: string): Promise<boolean> {
    this.calls.push(`hasCard:${userId}`);
    return this.cards.has(userId);
  }
  async cardCheckoutUrl(userId: string): Promise<string> {
    return `${this.checkoutBase}/setup-${userId}`;
  }
  async startSubscription(userId: string, item: { ref: string; description: string; monthlyCents: number }): Promise<{ subscriptionId: string }> {
    this.calls.push(`start:${item.ref}`);
    if (this.failStarts > 0) {
      this.failStarts -= 1;
      throw new AppError('provider_error', 'the payment provider declined the subscription');
    }
    const existing = [...this.subscriptions.values()].find((s) => s.ref === item.ref);
    if (existing) return { subscriptionId: existing.id };
    const id = `sub_fake_${++this.seq}`;
    this.subscriptions.set(id, { id, userId, ...item, status: 'active' });
    return { subscriptionId: id };
  }
  async cancelSubscription(userId: string, subscriptionId: string): Promise<void> {
    this.calls.push(`cancel:${subscriptionId}`);
    if (this.failCancels > 0) {
      this.failCancels -= 1;
      throw new AppError('provider_error', 'the payment provider could not cancel the subscription');
    }
    const sub = this.subscriptions.get(subscriptionId);
    if (sub && sub.userId === userId) sub.status = 'canceled';
  }
  async balanceCents(userId: string): Promise<number> {
    return this.ledger.filter((e) => e.userId === userId).reduce((sum, e) => sum + e.cents, 0);
  }
  async reserve(userId: string, cents: number, ref: string): Promise<void> {
    if (this.ledger.some((e) => e.ref === ref)) return;
    if ((await this.balanceCents(userId)) < cents) throw new AppError('insufficient_funds', 'balance too low');
    this.ledger.push({ userId, cents: -cents, ref });
  }
  async settle(ref: string, usedCents: number): Promise<void> {
    const hold = this.ledger.find((e) => e.ref === ref);
    if (hold && !this.ledger.some((e) => e.ref === `${ref}:settle`)) this.ledger.push({ userId: hold.userId, cents: -hold.cents - usedCents, ref: `${ref}:settle` });
  }
  async refund(ref: string): Promise<void> {
    return this.settle(ref, 0);
  }
  async settleAbandoned(): Promise<number> {
    return 0;
  }
  async recordUsage(userId: string, kind: UsageKind, quantity: number, ref: string): Promise<void> {
    if (!this.usage.some((u) => u.ref === ref)) this.usage.push({ userId, kind, quantity, ref });
  }
  async currentPeriod(): Promise<BillingPeriod> {
    const now = new Date();
    return { planKey: null, start: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1), end: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) };
  }
  async remainingAllowance(): Promise<number> {
    return 0;
  }
}
