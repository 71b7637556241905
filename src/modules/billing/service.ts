// Billing rules: checkouts for top-ups, cards and plans, the customer portal,
// subscriptions for bought items, usage and periods. Implements BillingAccount
// for telephony, connect and calls, so those areas never touch billing tables.
// Payment events are applied by PaymentEventHandler (payment-events.ts).
import { randomBytes } from 'node:crypto';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import { checkReturnUrl } from '../../http/return-url.js';
import type { RateLimitRule } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { newId } from '../../lib/ids.js';
import { addMonthsUtc, monthStartUtc } from '../../lib/time.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import type { BillingAccount, BillingPeriod, UsageKind } from './account.js';
import { type Catalog, type Plan, priceOf, usageKinds } from './catalog.js';
import type { CreditLedger } from './ledger.js';
import type { BillingStore } from './store.js';
import type { BillingSubscriptionsTable } from './tables.js';

export interface BillingConfig {
  publicUrl: string;
  returnUrlOrigins: string[];
  /** Payment pages a user may open (each calls the payment provider). */
  sessionsPerUser: RateLimitRule;
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
    private readonly limiter: RateLimiter,
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

  async startSubscription(
    userId: string,
    item: { ref: string; description: string; monthlyCents: number },
  ): Promise<{ subscriptionId: string }> {
    if (!Number.isSafeInteger(item.monthlyCents) || item.monthlyCents <= 0)
      throw invalidInput('monthlyCents must be a whole number > 0');
    if (!item.ref || item.ref.length > 200) throw invalidInput('a reference is 1 to 200 characters');
    const known = await this.store.subscriptionByRef(item.ref);
    if (known) return this.sameOwner(known, userId);
    const customer = await this.ensureCustomer(userId);
    if (!customer.payment_method_id) {
      const url = await this.cardCheckoutUrl(userId);
      throw new AppError('payment_method_required', 'a card on file is required: complete the checkout at url', {
        url,
      });
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
    if (!Number.isSafeInteger(quantity) || quantity < 0)
      throw invalidInput('usage quantity must be a whole number ≥ 0');
    if (!ref || ref.length > 200) throw invalidInput('a reference is 1 to 200 characters');
    await this.store.insertUsage({ ref, kind, userId, quantity, now: this.clock.now() });
  }

  async currentPeriod(userId: string): Promise<BillingPeriod> {
    return (await this.planAndPeriod(userId)).period;
  }

  async remainingAllowance(userId: string, kind: UsageKind): Promise<number> {
    return (await this.allowances(userId, [kind])).remaining[kind];
  }

  async allowances<K extends UsageKind>(
    userId: string,
    kinds: readonly K[],
  ): Promise<{ period: BillingPeriod; remaining: Record<K, number> }> {
    const { plan, period, subscription } = await this.planAndPeriod(userId);
    const remaining = Object.fromEntries(kinds.map((kind) => [kind, 0])) as Record<K, number>;
    if (!plan) return { period, remaining };
    const [included, totals] = await Promise.all([
      this.includedFor(plan, period, subscription),
      this.store.usageTotals(userId, period.start, period.end),
    ]);
    for (const kind of kinds) remaining[kind] = Math.max(0, included[kind] - (totals.get(kind) ?? 0));
    return { period, remaining };
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

  async choosePlan(
    userId: string,
    input: { plan: string; mode?: 'upgrade'; returnTo?: string },
  ): Promise<{ url: string }> {
    const plan = this.catalog.plan(input.plan);
    if (!plan)
      throw invalidInput(`unknown plan "${input.plan}"; plans: ${this.catalog.plans.map((p) => p.key).join(', ')}`);
    const live = await this.store.livePlan(userId);
    if (input.mode !== 'upgrade') {
      if (live)
        throw new AppError(
          'conflict',
          `already subscribed to ${live.plan_key}: send mode "upgrade" to change the plan`,
        );
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
      upgrade: { subscriptionId: live.provider_subscription_id, plan: priceOf(plan) },
    });
    await this.store.setProviderSession(id, portal.providerSessionId);
    return { url: portal.url };
  }

  async portal(userId: string, returnTo?: string): Promise<{ url: string }> {
    const returnUrl = this.returnUrl(returnTo);
    const customer = await this.ensureCustomer(userId);
    const id = await this.openSession(userId, 'portal', {}, returnUrl);
    const portal = await this.payments.createPortal({
      sessionId: id,
      customerId: customer.customer_id,
      returnUrl: this.providerReturnUrl(returnUrl),
    });
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
    const included = plan ? await this.includedFor(plan, period, subscription) : null;
    const usageRaw = Object.fromEntries(usageKinds.map((k) => [k, totals.get(k) ?? 0])) as Record<UsageKind, number>;
    const usage = Object.fromEntries(usageKinds.map((k) => [k, Math.min(usageRaw[k], included?.[k] ?? 0)])) as Record<
      UsageKind,
      number
    >;
    return {
      plan: plan
        ? {
            key: plan.key,
            name: plan.name,
            priceUsd: plan.priceUsd,
            status: subscription!.status,
            included: included!,
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

  // ---- internals

  private async planAndPeriod(
    userId: string,
  ): Promise<{ plan: Plan | null; period: BillingPeriod; subscription: BillingSubscriptionsTable | null }> {
    const now = this.clock.now();
    const live = await this.store.livePlan(userId);
    const plan =
      live && LIVE_STATES.has(live.status) && live.plan_key ? (this.catalog.plan(live.plan_key) ?? null) : null;
    if (plan && live && live.period_start !== null && live.period_end !== null) {
      let start = Number(live.period_start);
      let end = Number(live.period_end);
      // A renewal whose event has not arrived yet: the next period follows on.
      for (let i = 0; end <= now && i < 1200; i++) [start, end] = [end, addMonthsUtc(end, 1)];
      return { plan, period: { planKey: plan.key, start, end }, subscription: live };
    }
    const start = monthStartUtc(now);
    return {
      plan,
      period: { planKey: plan?.key ?? null, start, end: addMonthsUtc(start, 1) },
      subscription: plan ? live! : null,
    };
  }

  /**
   * What the period includes: each plan in force over it, for the share of
   * the period it was in force (rounded down), as the provider prorates the
   * price. A change mid-period gives the new plan's allowance for the rest of
   * the period only, so upgrading and downgrading at once yields no more than
   * was paid for. Without changes in the period: the plan's full quantities.
   */
  private async includedFor(
    plan: Plan,
    period: BillingPeriod,
    subscription: BillingSubscriptionsTable | null,
  ): Promise<Record<UsageKind, number>> {
    if (!subscription) return plan.included;
    const changes = (await this.store.planChanges(subscription.id, period.start)).filter(
      (c) => Number(c.at) < period.end,
    );
    if (changes.length === 0) return plan.included;
    const length = period.end - period.start;
    const sum = Object.fromEntries(usageKinds.map((k) => [k, 0])) as Record<UsageKind, number>;
    const add = (key: string, ms: number) => {
      const inForce = this.catalog.plan(key) ?? plan;
      for (const k of usageKinds) sum[k] += (inForce.included[k] * ms) / length;
    };
    let from = period.start;
    let key = changes[0]!.from_plan;
    for (const change of changes) {
      add(key, Number(change.at) - from);
      from = Number(change.at);
      key = change.to_plan;
    }
    add(plan.key, period.end - from);
    return Object.fromEntries(usageKinds.map((k) => [k, Math.floor(sum[k] + 1e-9)])) as Record<UsageKind, number>;
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

  /**
   * One open plan checkout per user: the open one's page when it is for the
   * same plan; 409 naming it when it is for another (so two plan checkouts can
   * never both be paid). Null when none is open.
   */
  private async openPlanCheckout(userId: string, plan: Plan): Promise<string | null> {
    const open = await this.store.openSessionOf(userId, 'plan', this.clock.now());
    if (!open) return null;
    if (!open.url) throw new AppError('idempotency_in_progress', 'a plan checkout is being opened; retry in a moment');
    if (open.plan_key === plan.key) return open.url;
    throw new AppError(
      'conflict',
      `a checkout for the ${open.plan_key} plan is open: complete it at url, or wait until it expires (${new Date(Number(open.expires_at)).toISOString()}) to choose another plan`,
      {
        url: open.url,
        plan: open.plan_key,
        expiresAt: new Date(Number(open.expires_at)).toISOString(),
      },
    );
  }

  private async openSession(
    userId: string,
    purpose: string,
    what: { amountCents?: number; plan?: Plan },
    returnUrl: string | null,
  ): Promise<string> {
    await this.limiter.consume(`billing-session:user:${userId}`, this.config.sessionsPerUser);
    const now = this.clock.now();
    // The id is the capability in a sandbox page's URL: 192 random bits, as unguessable as a Stripe Checkout URL.
    const id = `bs_${randomBytes(24).toString('base64url')}`;
    if (purpose === 'plan') {
      const row = {
        id,
        user_id: userId,
        purpose,
        amount_cents: null,
        plan_key: what.plan!.key,
        provider_session_id: null,
        return_to: returnUrl,
        status: 'open',
        expires_at: now + SESSION_TTL_MS,
        created_at: now,
        completed_at: null,
      };
      // Another request opened one meanwhile: the unique index decided; answer as for an open one.
      if (!(await this.store.insertUniqueSession(row, now))) {
        await this.openPlanCheckout(userId, what.plan!);
        throw new AppError('idempotency_in_progress', 'a plan checkout is being opened; retry in a moment');
      }
      return id;
    }
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

  private async openCheckout(
    userId: string,
    purpose: 'topup' | 'card' | 'plan',
    what: { amountCents?: number; plan?: Plan },
    returnTo: string | undefined,
  ) {
    const returnUrl = this.returnUrl(returnTo);
    if (purpose === 'plan') {
      const open = await this.openPlanCheckout(userId, what.plan!);
      if (open) return open;
    }
    const customer = await this.ensureCustomer(userId);
    const id = await this.openSession(userId, purpose, what, returnUrl);
    let checkout: { url: string; providerSessionId: string };
    try {
      checkout = await this.payments.createCheckout({
        sessionId: id,
        userId,
        customerId: customer.customer_id,
        purpose,
        amountCents: what.amountCents,
        plan: what.plan ? priceOf(what.plan) : undefined,
        successUrl: this.providerReturnUrl(returnUrl),
        cancelUrl: this.providerReturnUrl(returnUrl),
        expiresAt: this.clock.now() + SESSION_TTL_MS,
      });
    } catch (err) {
      // Not left open: an open plan session would block the next plan checkout.
      await this.store.failSession(id);
      throw err;
    }
    await this.store.setProviderSession(id, checkout.providerSessionId, checkout.url);
    return checkout.url;
  }
}
