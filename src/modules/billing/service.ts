// Billing rules: checkouts for top-ups, cards and plans, the customer portal,
// subscriptions for bought items, usage and periods, and the one handler that
// applies payment events, whether they come from Stripe's webhook or a
// submitted sandbox page. Implements BillingAccount for telephony, connect and
// calls, so those areas never touch billing tables.
import { randomBytes } from 'node:crypto';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import { checkReturnUrl } from '../../http/return-url.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { addMonthsUtc, monthStartUtc } from '../../lib/time.js';
import type { PaymentEvent, PaymentsProvider, ProviderSubscription } from '../../providers/payments/interface.js';
import type { SandboxSession } from '../../providers/payments/sandbox.js';
import type { BillingAccount, BillingPeriod, UsageKind } from './account.js';
import { type Catalog, type Plan, usageKinds } from './catalog.js';
import type { CreditLedger } from './ledger.js';
import type { BillingStore } from './store.js';
import type { BillingSubscriptionsTable } from './tables.js';

export interface BillingConfig {
  publicUrl: string;
  returnUrlOrigins: string[];
  /** Default top-up in US dollars (CREDITS_TOPUP_USD). */
  topupDefaultUsd: number;
}

/** Looks up what the payment provider's customer record carries (email). */
export type UserLookup = (userId: string) => Promise<{ email: string } | undefined>;

const SESSION_TTL_MS = 24 * 3600_000;
/** Subscription states in which the plan's allowance applies. */
const LIVE_STATES = new Set(['active', 'trialing', 'past_due']);
export const TOPUP_MIN_USD = 5;
export const TOPUP_MAX_USD = 1000;

export const money = (cents: number) => ({ amount: cents / 100, currency: 'usd' as const });

export class BillingService implements BillingAccount {
  constructor(
    private readonly config: BillingConfig,
    private readonly store: BillingStore,
    readonly ledger: CreditLedger,
    readonly catalog: Catalog,
    readonly payments: PaymentsProvider,
    private readonly users: UserLookup,
    private readonly clock: Clock,
  ) {}

  // ---- BillingAccount: money

  balanceCents(userId: string) {
    return this.ledger.balanceCents(userId);
  }
  reserve(userId: string, cents: number, ref: string) {
    return this.ledger.reserve(userId, cents, ref);
  }
  settle(ref: string, usedCents: number) {
    return this.ledger.settle(ref, usedCents);
  }
  refund(ref: string) {
    return this.ledger.refund(ref);
  }
  settleAbandoned(olderThanMs: number) {
    return this.ledger.settleAbandoned(olderThanMs);
  }

  // ---- BillingAccount: cards and subscriptions

  async hasCard(userId: string): Promise<boolean> {
    return Boolean((await this.store.customer(userId))?.payment_method_id);
  }

  cardCheckoutUrl(userId: string, returnTo?: string): Promise<string> {
    return this.openCheckout(userId, 'card', {}, returnTo);
  }

  async startSubscription(userId: string, item: { ref: string; description: string; monthlyCents: number }): Promise<{ subscriptionId: string }> {
    if (!Number.isSafeInteger(item.monthlyCents) || item.monthlyCents <= 0) throw invalidInput('monthlyCents must be a whole number > 0');
    if (!item.ref || item.ref.length > 200) throw invalidInput('a reference is 1 to 200 characters');
    const known = await this.store.subscriptionByRef(item.ref);
    if (known) return this.sameOwner(known, userId);
    const customer = await this.ensureCustomer(userId);
    if (!customer.payment_method_id) {
      const url = await this.cardCheckoutUrl(userId);
      throw new AppError('payment_method_required', 'a card on file is required: complete the checkout at url', { url });
    }
    const sub = await this.payments.createSubscription({
      userId,
      customerId: customer.customer_id,
      paymentMethodId: customer.payment_method_id,
      description: item.description,
      monthlyCents: item.monthlyCents,
      ref: item.ref,
    });
    const now = this.clock.now();
    await this.store.insertSubscription({
      id: newId(now),
      user_id: userId,
      kind: 'item',
      ref: item.ref,
      provider_subscription_id: sub.id,
      plan_key: null,
      description: item.description,
      monthly_cents: item.monthlyCents,
      status: sub.status,
      period_start: sub.periodStart,
      period_end: sub.periodEnd,
      created_at: now,
      updated_at: now,
    });
    // A webhook about the new subscription may have recorded it first (by ref from its metadata).
    const row = (await this.store.subscriptionByRef(item.ref)) ?? (await this.store.subscriptionByProviderId(sub.id));
    if (!row) throw new AppError('internal_error', 'subscription was not recorded');
    return this.sameOwner(row, userId);
  }

  async cancelSubscription(userId: string, subscriptionId: string): Promise<void> {
    const row = await this.store.subscription(subscriptionId);
    if (!row || row.user_id !== userId) throw notFound('subscription');
    if (row.status === 'canceled') return;
    await this.payments.cancelSubscription(row.provider_subscription_id);
    await this.store.updateSubscription(row.id, { status: 'canceled', updated_at: this.clock.now() });
  }

  // ---- BillingAccount: usage

  async recordUsage(userId: string, kind: UsageKind, quantity: number, ref: string): Promise<void> {
    if (!usageKinds.includes(kind)) throw invalidInput(`unknown usage kind ${kind}`);
    if (!Number.isSafeInteger(quantity) || quantity < 0) throw invalidInput('usage quantity must be a whole number ≥ 0');
    if (!ref || ref.length > 200) throw invalidInput('a reference is 1 to 200 characters');
    await this.store.insertUsage({ ref, kind, userId, quantity, now: this.clock.now() });
  }

  async currentPeriod(userId: string): Promise<BillingPeriod> {
    return (await this.planAndPeriod(userId)).period;
  }

  async remainingAllowance(userId: string, kind: UsageKind): Promise<number> {
    const { plan, period } = await this.planAndPeriod(userId);
    if (!plan) return 0;
    const used = (await this.store.usageTotals(userId, period.start, period.end)).get(kind) ?? 0;
    return Math.max(0, plan.included[kind] - used);
  }

  // ---- routes

  async credits(userId: string) {
    return money(await this.ledger.cachedBalanceCents(userId));
  }

  async addCredits(userId: string, input: { amountUsd?: number; returnTo?: string }): Promise<{ url: string }> {
    const usd = input.amountUsd ?? this.config.topupDefaultUsd;
    const cents = Math.round(usd * 100);
    if (!(usd >= TOPUP_MIN_USD && usd <= TOPUP_MAX_USD) || Math.abs(cents - usd * 100) > 1e-6) {
      throw invalidInput(`amount must be ${TOPUP_MIN_USD} to ${TOPUP_MAX_USD} US dollars in whole cents`);
    }
    return { url: await this.openCheckout(userId, 'topup', { amountCents: cents }, input.returnTo) };
  }

  async choosePlan(userId: string, input: { plan: string; mode?: 'upgrade'; returnTo?: string }): Promise<{ url: string }> {
    const plan = this.catalog.plan(input.plan);
    if (!plan) throw invalidInput(`unknown plan "${input.plan}"; plans: ${this.catalog.plans.map((p) => p.key).join(', ')}`);
    const live = await this.store.livePlan(userId);
    if (input.mode !== 'upgrade') {
      if (live) throw new AppError('conflict', `already subscribed to ${live.plan_key}: send mode "upgrade" to change the plan`);
      return { url: await this.openCheckout(userId, 'plan', { plan }, input.returnTo) };
    }
    if (!live) throw new AppError('conflict', 'there is no subscription to upgrade: choose a plan without mode first');
    if (live.plan_key === plan.key) throw new AppError('conflict', `already on the ${plan.key} plan`);
    const returnUrl = this.returnUrl(input.returnTo);
    const customer = await this.ensureCustomer(userId);
    const id = await this.openSession(userId, 'upgrade', { plan }, returnUrl);
    const portal = await this.payments.createPortal({
      sessionId: id,
      customerId: customer.customer_id,
      returnUrl: this.providerReturnUrl(returnUrl),
      upgrade: { subscriptionId: live.provider_subscription_id, plan: this.priceOf(plan) },
    });
    await this.store.setProviderSession(id, portal.providerSessionId);
    return { url: portal.url };
  }

  async portal(userId: string, returnTo?: string): Promise<{ url: string }> {
    const returnUrl = this.returnUrl(returnTo);
    const customer = await this.ensureCustomer(userId);
    const id = await this.openSession(userId, 'portal', {}, returnUrl);
    const portal = await this.payments.createPortal({ sessionId: id, customerId: customer.customer_id, returnUrl: this.providerReturnUrl(returnUrl) });
    await this.store.setProviderSession(id, portal.providerSessionId);
    return { url: portal.url };
  }

  async state(userId: string) {
    const [{ plan, period, subscription }, customer, balance] = await Promise.all([
      this.planAndPeriod(userId),
      this.store.customer(userId),
      this.ledger.cachedBalanceCents(userId),
    ]);
    const totals = await this.store.usageTotals(userId, period.start, period.end);
    const usageRaw = Object.fromEntries(usageKinds.map((k) => [k, totals.get(k) ?? 0])) as Record<UsageKind, number>;
    const usage = Object.fromEntries(usageKinds.map((k) => [k, Math.min(usageRaw[k], plan?.included[k] ?? 0)])) as Record<UsageKind, number>;
    return {
      plan: plan
        ? {
            key: plan.key,
            name: plan.name,
            priceUsd: plan.priceUsd,
            status: subscription!.status,
            included: plan.included,
          }
        : null,
      usage,
      usageRaw,
      hasCard: Boolean(customer?.payment_method_id),
      balance: money(balance),
      period: { start: new Date(period.start).toISOString(), end: new Date(period.end).toISOString() },
    };
  }

  voicePricing() {
    return this.catalog.voiceRates.map((r) => ({
      country: r.country,
      name: r.name,
      inboundPerMinute: r.inbound / 10_000,
      outboundPerMinute: r.outbound / 10_000,
      currency: 'usd' as const,
    }));
  }

  // ---- payment events (Stripe webhooks and sandbox pages)

  /** Applies a provider event once: a replay, a retry or a second instance handling it changes nothing. */
  async handleEvent(event: PaymentEvent): Promise<'handled' | 'duplicate' | 'ignored'> {
    const now = this.clock.now();
    const touched: string[] = [];
    const outcome = await this.store.transaction(async (s) => {
      if (!(await s.markEvent(event.id, event.type, now))) return 'duplicate' as const;
      if (event.type === 'ignored') return 'ignored' as const;
      if (event.type === 'checkout.completed') {
        const session = await s.session(event.sessionId);
        if (!session) return 'ignored' as const;
        touched.push(session.user_id);
        await s.completeSession(session.id, now);
        if (event.card) await s.setCard(session.user_id, event.card, now);
        if (session.purpose === 'topup' && event.paid && event.amountCents && event.amountCents > 0) {
          await s.append({ userId: session.user_id, cents: event.amountCents, reason: 'topup', ref: `topup:${session.id}`, now });
        }
        if (session.purpose === 'plan' && event.subscription) {
          await this.recordSubscription(s, session.user_id, 'plan', event.subscription, session.plan_key, now);
        }
        return 'handled' as const;
      }
      const sub = event.subscription;
      const known = await s.subscriptionByProviderId(sub.id);
      const userId = known?.user_id ?? (await this.ownerOf(s, sub));
      if (!userId) return 'ignored' as const;
      if (event.type === 'subscription.deleted') sub.status = 'canceled';
      await this.recordSubscription(s, userId, known?.kind ?? (sub.metadata.ref ? 'item' : 'plan'), sub, known?.plan_key ?? null, now);
      return 'handled' as const;
    });
    for (const userId of touched) this.ledger.forget(userId);
    return outcome;
  }

  // ---- sandbox pages

  /** What a sandbox checkout or portal page shows. */
  async sandboxSession(id: string, page: 'checkout' | 'portal') {
    const session = await this.store.session(id);
    if (!session || (page === 'portal') !== (session.purpose === 'portal')) throw notFound('session');
    const plan = session.plan_key ? (this.catalog.plan(session.plan_key) ?? null) : null;
    const expired = session.status === 'open' && session.expires_at <= this.clock.now();
    return { session, plan, expired };
  }

  /** The sandbox portal's contents: plan, card, balance and recent ledger entries. */
  async sandboxPortal(userId: string) {
    const [state, customer, entries] = await Promise.all([this.state(userId), this.store.customer(userId), this.store.listEntries(userId, 50)]);
    return { state, customer, entries };
  }

  /** Completes a sandbox checkout as if the customer paid, through handleEvent (a second submit is a duplicate). */
  async completeSandboxSession(id: string, complete: (session: SandboxSession, now: number) => PaymentEvent) {
    const { session, plan, expired } = await this.sandboxSession(id, 'checkout');
    if (expired) throw new AppError('conflict', 'this checkout session has expired');
    const customer = await this.store.customer(session.user_id);
    if (!customer) throw notFound('session');
    const live = session.purpose === 'upgrade' ? await this.store.livePlan(session.user_id) : undefined;
    const event = complete({
      id: session.id,
      userId: session.user_id,
      customerId: customer.customer_id,
      purpose: session.purpose as 'topup' | 'card' | 'plan' | 'upgrade',
      amountCents: session.amount_cents,
      plan: plan ? this.priceOf(plan) : null,
      subscription: live ? this.asProviderSubscription(live, customer.customer_id) : null,
    }, this.clock.now());
    await this.handleEvent(event);
    if (session.purpose === 'upgrade') await this.store.completeSession(session.id, this.clock.now());
    return session;
  }

  // ---- internals

  private async planAndPeriod(userId: string): Promise<{ plan: Plan | null; period: BillingPeriod; subscription: BillingSubscriptionsTable | null }> {
    const now = this.clock.now();
    const live = await this.store.livePlan(userId);
    const plan = live && LIVE_STATES.has(live.status) && live.plan_key ? (this.catalog.plan(live.plan_key) ?? null) : null;
    if (plan && live && live.period_start !== null && live.period_end !== null) {
      let start = Number(live.period_start);
      let end = Number(live.period_end);
      // A renewal whose event has not arrived yet: the next period follows on.
      for (let i = 0; end <= now && i < 1200; i++) [start, end] = [end, addMonthsUtc(end, 1)];
      return { plan, period: { planKey: plan.key, start, end }, subscription: live };
    }
    const start = monthStartUtc(now);
    return { plan, period: { planKey: plan?.key ?? null, start, end: addMonthsUtc(start, 1) }, subscription: plan ? live! : null };
  }

  private sameOwner(row: BillingSubscriptionsTable, userId: string) {
    if (row.user_id !== userId) throw new AppError('conflict', 'this reference belongs to another subscription');
    return { subscriptionId: row.id };
  }

  /** The caller's returnTo (checked against the allow-list), or null; providers get the service's own URL when it is null. */
  private returnUrl(returnTo: string | undefined): string | null {
    return returnTo ? checkReturnUrl(returnTo, this.config.returnUrlOrigins, 'returnTo').href : null;
  }

  private providerReturnUrl(returnTo: string | null): string {
    return returnTo ?? `${this.config.publicUrl}/`;
  }

  private priceOf(plan: Plan) {
    return { key: plan.key, name: plan.name, monthlyCents: plan.monthlyCents, ...(plan.stripePriceId ? { stripePriceId: plan.stripePriceId } : {}) };
  }

  /** The user's payment customer, created at the provider on first use. */
  private async ensureCustomer(userId: string) {
    const existing = await this.store.customer(userId);
    if (existing && existing.provider === this.payments.name) return existing;
    const user = await this.users(userId);
    if (!user) throw notFound('user');
    const { customerId } = await this.payments.createCustomer({ userId, email: user.email });
    const now = this.clock.now();
    const row0 = {
      user_id: userId,
      provider: this.payments.name,
      customer_id: customerId,
      payment_method_id: null,
      card_brand: null,
      card_last4: null,
      created_at: now,
      updated_at: now,
    };
    // A customer of another provider (the sandbox before Stripe was configured) is replaced, card and all.
    if (existing) await this.store.replaceCustomer(row0);
    else await this.store.insertCustomer(row0);
    const row = await this.store.customer(userId);
    if (!row) throw new AppError('internal_error', 'customer was not recorded');
    return row;
  }

  private async openSession(userId: string, purpose: string, what: { amountCents?: number; plan?: Plan }, returnUrl: string | null): Promise<string> {
    const now = this.clock.now();
    // The id is the capability in a sandbox page's URL: 192 random bits, as unguessable as a Stripe Checkout URL.
    const id = `bs_${randomBytes(24).toString('base64url')}`;
    await this.store.insertSession({
      id,
      user_id: userId,
      purpose,
      amount_cents: what.amountCents ?? null,
      plan_key: what.plan?.key ?? null,
      provider_session_id: null,
      return_to: returnUrl,
      status: 'open',
      expires_at: now + SESSION_TTL_MS,
      created_at: now,
      completed_at: null,
    });
    return id;
  }

  private async openCheckout(userId: string, purpose: 'topup' | 'card' | 'plan', what: { amountCents?: number; plan?: Plan }, returnTo: string | undefined) {
    const returnUrl = this.returnUrl(returnTo);
    const customer = await this.ensureCustomer(userId);
    const id = await this.openSession(userId, purpose, what, returnUrl);
    const checkout = await this.payments.createCheckout({
      sessionId: id,
      userId,
      customerId: customer.customer_id,
      purpose,
      amountCents: what.amountCents,
      plan: what.plan ? this.priceOf(what.plan) : undefined,
      successUrl: this.providerReturnUrl(returnUrl),
      cancelUrl: this.providerReturnUrl(returnUrl),
      expiresAt: this.clock.now() + SESSION_TTL_MS,
    });
    await this.store.setProviderSession(id, checkout.providerSessionId);
    return checkout.url;
  }

  /** The user a provider subscription belongs to: its metadata names the user, and the customer must be theirs. */
  private async ownerOf(s: BillingStore, sub: ProviderSubscription): Promise<string | null> {
    const userId = sub.metadata.userId;
    if (!userId) return null;
    const customer = await s.customer(userId);
    return customer && customer.customer_id === sub.customerId ? userId : null;
  }

  private async recordSubscription(s: BillingStore, userId: string, kind: string, sub: ProviderSubscription, planKey: string | null, now: number) {
    const key = kind === 'plan' ? (sub.planKey ?? planKey) : null;
    const plan = key ? this.catalog.plan(key) : undefined;
    const monthly = sub.monthlyCents ?? plan?.monthlyCents ?? 0;
    const known = await s.subscriptionByProviderId(sub.id);
    if (known) {
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

  private asProviderSubscription(row: BillingSubscriptionsTable, customerId: string): ProviderSubscription {
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
}
