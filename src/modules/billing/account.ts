// What other areas (telephony, connect, calls) may ask of billing. They hold a
// BillingAccount and never touch billing tables; billing implements it over its
// ledger, cards and subscriptions. Money is integer cents throughout.

/** Quantities a plan includes per billing period (spec 2.17). */
export type UsageKind = 'seconds_inbound' | 'seconds_outbound' | 'calls_inbound' | 'calls_outbound' | 'leads';

export interface BillingPeriod {
  /** Plan key (`starter`, …) or null without a subscription. */
  planKey: string | null;
  /** Epoch ms, inclusive: the subscription's period, else the calendar month (UTC). */
  start: number;
  /** Epoch ms, exclusive. */
  end: number;
}

export interface BillingAccount {
  /** True when the user has a default payment method (card on file). */
  hasCard(userId: string): Promise<boolean>;
  /** A page where the user saves a card (setup checkout); for 409 `payment_method_required` answers. */
  cardCheckoutUrl(userId: string, returnTo?: string): Promise<string>;

  /**
   * Starts a monthly subscription for something the user bought (a phone number).
   * Idempotent by `ref`: the same ref returns the same subscription.
   * Throws AppError `payment_method_required` (409, with a checkout `url`) without a card on file,
   * `provider_refused` (400) when the card is declined, `provider_error` (502) when the provider fails.
   */
  startSubscription(
    userId: string,
    item: { ref: string; description: string; monthlyCents: number },
  ): Promise<{ subscriptionId: string }>;
  /** Cancels it; AppError `provider_error` when the provider fails (the caller then keeps the item). Cancelling twice is a no-op. */
  cancelSubscription(userId: string, subscriptionId: string): Promise<void>;

  /** Prepaid balance in cents (sum of the ledger, reservations included). */
  balanceCents(userId: string): Promise<number>;
  /**
   * Holds `cents` of the prepaid balance under `ref` (a ledger debit). Idempotent by ref.
   * AppError `insufficient_funds` (402) when the balance does not cover it.
   * A hold survives a crash: settleAbandoned() finishes holds left open.
   */
  reserve(userId: string, cents: number, ref: string): Promise<void>;
  /** Keeps `usedCents` (≤ the hold) of reservation `ref` and returns the rest. Once per ref. */
  settle(ref: string, usedCents: number): Promise<void>;
  /** Returns the whole hold of `ref`. Once per ref. */
  refund(ref: string): Promise<void>;
  /** Settles holds older than `olderThanMs` that were never settled (start-up recovery), returning them whole. Returns how many. */
  settleAbandoned(olderThanMs: number): Promise<number>;

  /** Adds usage for the current period. Idempotent by `ref` (a call id, a connect job id). */
  recordUsage(userId: string, kind: UsageKind, quantity: number, ref: string): Promise<void>;
  /** The current plan and period. */
  currentPeriod(userId: string): Promise<BillingPeriod>;
  /** What remains of the plan's included quantity of `kind` in the current period (0 without a plan). */
  remainingAllowance(userId: string, kind: UsageKind): Promise<number>;
  /** The current period and what remains of each of `kinds` in it, from one read of the plan and one of the usage. */
  allowances<K extends UsageKind>(
    userId: string,
    kinds: readonly K[],
  ): Promise<{ period: BillingPeriod; remaining: Record<K, number> }>;
}
