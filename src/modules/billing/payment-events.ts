// The one handler of payment events, whether Stripe's webhook or a submitted
// sandbox page reports them: top-ups credited, cards kept, subscriptions
// recorded. Each event id is recorded in the same transaction that applies
// it, so a replay, a retry or a second instance changes nothing.
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { PaymentEvent, ProviderSubscription } from '../../providers/payments/interface.js';
import type { Catalog } from './catalog.js';
import type { CreditLedger } from './ledger.js';
import type { BillingStore } from './store.js';
import type { BillingSubscriptionsTable } from './tables.js';

export type EventOutcome = 'handled' | 'duplicate' | 'ignored';

/** An item subscription's recorded status, for the area that sold the item (telephony for numbers). */
export interface ItemStatus {
  userId: string;
  /** The ref the item was bought under (`phone-number:<id>`). */
  ref: string;
  /** The provider's status: active, trialing, past_due, unpaid, canceled, … */
  status: string;
  /** The item is paid for (active or trialing); otherwise its service stops until it is. */
  paid: boolean;
}
export type ItemStatusListener = (change: ItemStatus) => Promise<void>;

/** Subscription statuses under which what it pays for is served. */
const PAID_STATUSES = new Set(['active', 'trialing']);

export class PaymentEventHandler {
  constructor(
    private readonly store: BillingStore,
    private readonly ledger: CreditLedger,
    private readonly catalog: Catalog,
    /** The active provider's name: cards are matched on its customers. */
    private readonly providerName: string,
    private readonly clock: Clock,
  ) {}

  /** Applies a provider event once. */
  async handle(event: PaymentEvent): Promise<EventOutcome> {
    const now = this.clock.now();
    const touched: string[] = [];
    const outcome = await this.store.transaction(async (s): Promise<EventOutcome> => {
      if (!(await s.markEvent(event.id, event.type, now))) return 'duplicate';
      if (event.type === 'ignored') return 'ignored';
      if (event.type === 'checkout.completed') {
        const session = await s.session(event.sessionId);
        // Only the provider session opened for this row completes it (its id was recorded when it was opened).
        if (
          !session ||
          (session.provider_session_id !== null && session.provider_session_id !== event.providerSessionId)
        )
          return 'ignored';
        touched.push(session.user_id);
        await s.completeSession(session.id, now);
        if (event.card) await s.setCard(session.user_id, event.card, now);
        if (session.purpose === 'topup' && event.paid && event.amountCents && event.amountCents > 0) {
          await s.append({
            userId: session.user_id,
            cents: event.amountCents,
            reason: 'topup',
            ref: `topup:${session.id}`,
            now,
          });
        }
        if (session.purpose === 'plan' && event.subscription) {
          await this.recordSubscription(s, session.user_id, 'plan', event.subscription, session.plan_key, now);
        }
        return 'handled';
      }
      if (event.type === 'topup.refunded' || event.type === 'topup.disputed') {
        const session = await s.session(event.sessionId);
        if (session?.purpose !== 'topup' || session.status !== 'complete') return 'ignored';
        touched.push(session.user_id);
        // Each refund's (or dispute's) own id is the ref: taken off once, whichever events report it, partial ones
        // too. The balance may go below zero; holds are then refused until it is topped up again.
        const debits =
          event.type === 'topup.refunded'
            ? event.refunds.map((r) => ({
                cents: r.amountCents,
                reason: 'topup_refund',
                ref: `topup_refund:${r.refundId}`,
              }))
            : [{ cents: event.amountCents, reason: 'topup_dispute', ref: `topup_dispute:${event.disputeId}` }];
        for (const debit of debits)
          if (debit.cents > 0)
            await s.append({ userId: session.user_id, cents: -debit.cents, reason: debit.reason, ref: debit.ref, now });
        return 'handled';
      }
      if (event.type === 'card.removed') {
        const userId = await s.removeCard(this.providerName, event.customerId, event.paymentMethodId, now);
        return userId ? 'handled' : 'ignored';
      }
      const sub = event.subscription;
      const known = await s.subscriptionByProviderId(sub.id);
      const userId = known?.user_id ?? (await this.ownerOf(s, sub));
      if (!userId) return 'ignored';
      if (event.type === 'subscription.deleted') sub.status = 'canceled';
      const kind = known?.kind ?? (sub.metadata.kind === 'item' || sub.metadata.ref ? 'item' : 'plan');
      await this.recordSubscription(s, userId, kind, sub, known?.plan_key ?? null, now);
      return 'handled';
    });
    for (const userId of touched) this.ledger.forget(userId);
    // Items paid by a subscription follow its recorded status (a number is suspended while unpaid). Announced
    // after commit, also for a duplicate (the first delivery may have stopped before announcing), and always
    // with the status recorded now, so a replayed old event cannot move an item back.
    if (outcome !== 'ignored' && 'subscription' in event && event.subscription)
      await this.announceItem(event.subscription.id);
    return outcome;
  }

  private readonly itemListeners: ItemStatusListener[] = [];

  /** Calls `listener` with the recorded status of an item subscription each time a provider event concerns it. */
  onItemStatus(listener: ItemStatusListener): void {
    this.itemListeners.push(listener);
  }

  private async announceItem(providerSubscriptionId: string): Promise<void> {
    if (this.itemListeners.length === 0) return;
    const row = await this.store.subscriptionByProviderId(providerSubscriptionId);
    if (row?.kind !== 'item' || !row.ref) return;
    const change: ItemStatus = {
      userId: row.user_id,
      ref: row.ref,
      status: row.status,
      paid: PAID_STATUSES.has(row.status),
    };
    for (const listener of this.itemListeners) await listener(change);
  }

  /** The user a provider subscription belongs to: its metadata names the user, and the customer must be theirs. */
  private async ownerOf(s: BillingStore, sub: ProviderSubscription): Promise<string | null> {
    const userId = sub.metadata.userId;
    if (!userId) return null;
    const customer = await s.customer(userId);
    return customer && customer.customer_id === sub.customerId ? userId : null;
  }

  private async recordSubscription(
    s: BillingStore,
    userId: string,
    kind: string,
    sub: ProviderSubscription,
    planKey: string | null,
    now: number,
  ) {
    const key = kind === 'plan' ? (sub.planKey ?? planKey) : null;
    const plan = key ? this.catalog.plan(key) : undefined;
    const monthly = sub.monthlyCents ?? plan?.monthlyCents ?? 0;
    const known = await s.subscriptionByProviderId(sub.id);
    if (known) {
      // A plan change counts from now: the period's allowance is prorated over the plans in force, as the price is.
      if (kind === 'plan' && key && known.plan_key && key !== known.plan_key) {
        await s.insertPlanChange({
          id: newId(now),
          subscription_id: known.id,
          from_plan: known.plan_key,
          to_plan: key,
          at: now,
        });
      }
      await s.updateSubscription(known.id, {
        status: sub.status,
        plan_key: kind === 'plan' ? (key ?? known.plan_key) : known.plan_key,
        description: plan?.name ?? known.description,
        monthly_cents: monthly || Number(known.monthly_cents),
        period_start: sub.periodStart ?? known.period_start,
        period_end: sub.periodEnd ?? known.period_end,
        updated_at: now,
      });
      return;
    }
    await s.insertSubscription({
      id: newId(now),
      user_id: userId,
      kind,
      ref: kind === 'item' ? (sub.metadata.ref ?? null) : null,
      provider_subscription_id: sub.id,
      plan_key: key,
      description: plan?.name ?? sub.metadata.description ?? 'Subscription',
      monthly_cents: monthly,
      status: sub.status,
      period_start: sub.periodStart,
      period_end: sub.periodEnd,
      created_at: now,
      updated_at: now,
    });
  }
}

/** A recorded subscription as the provider would describe it (sandbox events start from it). */
export function asProviderSubscription(row: BillingSubscriptionsTable, customerId: string): ProviderSubscription {
  return {
    id: row.provider_subscription_id,
    customerId,
    status: row.status,
    planKey: row.plan_key,
    monthlyCents: Number(row.monthly_cents),
    periodStart: row.period_start,
    periodEnd: row.period_end,
    metadata: { userId: row.user_id },
  };
}
