// Stripe through the official SDK: Checkout Sessions (payment mode for
// top-ups with the card saved, setup mode for a card alone, subscription
// mode for plans), Billing Portal sessions (and the subscription-update
// confirmation flow for plan changes), subscriptions for bought items, and
// webhooks verified with stripe.webhooks.constructEvent on the raw body.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import { AppError } from '../../http/errors.js';
import type {
  CheckoutInput,
  PaymentCard,
  PaymentEvent,
  PaymentsProvider,
  PlanPrice,
  PortalInput,
  ProviderSubscription,
} from './interface.js';

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** https://api.stripe.com, or a local Stripe-speaking server in tests. */
  apiBase: string;
}

/** Stripe's recommended replay window for webhook signatures. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

type Obj = Record<string, any>;
const idOf = (value: unknown): string | null =>
  typeof value === 'string' ? value : value && typeof value === 'object' ? ((value as Obj).id ?? null) : null;
const ms = (seconds: unknown) => (typeof seconds === 'number' ? seconds * 1000 : null);
/** Idempotency keys are at most 255 characters: long references are hashed. */
// The SDK is loaded when this adapter is built, not at start: most servers
// (every sandbox one) never need it, and it costs about 0.1 s and 8 MB.
const loadStripe = () => createRequire(import.meta.url)('stripe') as typeof Stripe;

const keyFor = (kind: string, ref: string) => `${kind}-${createHash('sha256').update(ref).digest('hex').slice(0, 40)}`;

export class StripePaymentsProvider implements PaymentsProvider {
  readonly name = 'stripe';
  readonly sandbox = false;
  private readonly stripe: Stripe;
  private readonly prices = new Map<string, string>();

  constructor(
    private readonly settings: StripeSettings,
    /** The plans, to name the plan of a subscription's price. */
    private readonly plans: PlanPrice[],
  ) {
    const base = new URL(settings.apiBase);
    const StripeSdk = loadStripe();
    this.stripe = new StripeSdk(settings.secretKey, {
      host: base.hostname,
      port: base.port || (base.protocol === 'http:' ? 80 : 443),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      maxNetworkRetries: 2,
      timeout: 20_000,
      telemetry: false,
    });
  }

  async createCustomer(input: { userId: string; email: string | null }) {
    const customer = await this.call(() =>
      this.stripe.customers.create(
        { email: input.email ?? undefined, metadata: { userId: input.userId } },
        { idempotencyKey: keyFor('customer', input.userId) },
      ),
    );
    return { customerId: customer.id };
  }

  async createCheckout(input: CheckoutInput) {
    const metadata = { sessionId: input.sessionId, userId: input.userId, purpose: input.purpose };
    const common = {
      customer: input.customerId,
      client_reference_id: input.userId,
      metadata,
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
    };
    let params: Stripe.Checkout.SessionCreateParams;
    if (input.purpose === 'topup') {
      params = {
        ...common,
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: { currency: 'usd', unit_amount: input.amountCents!, product_data: { name: 'Prepaid credits' } },
          },
        ],
        // Keeps the card for later purchases (card on file).
        payment_intent_data: { setup_future_usage: 'off_session', metadata },
      };
    } else if (input.purpose === 'card') {
      params = { ...common, mode: 'setup', currency: 'usd', setup_intent_data: { metadata } };
    } else {
      const plan = input.plan!;
      params = {
        ...common,
        mode: 'subscription',
        line_items: [{ quantity: 1, price: await this.planPrice(plan) }],
        subscription_data: { metadata: { userId: input.userId, kind: 'plan', plan: plan.key } },
      };
    }
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create(params, { idempotencyKey: keyFor('checkout', input.sessionId) }),
    );
    if (!session.url) throw new AppError('provider_error', 'Stripe returned a checkout session without a url');
    return { url: session.url, providerSessionId: session.id };
  }

  async createPortal(input: PortalInput) {
    const params: Stripe.BillingPortal.SessionCreateParams = {
      customer: input.customerId,
      return_url: input.returnUrl,
    };
    if (input.upgrade) {
      const subscription = await this.call(() => this.stripe.subscriptions.retrieve(input.upgrade!.subscriptionId));
      const item = subscription.items.data[0];
      if (!item) throw new AppError('provider_error', 'the Stripe subscription has no item to change');
      params.flow_data = {
        type: 'subscription_update_confirm',
        subscription_update_confirm: {
          subscription: subscription.id,
          items: [{ id: item.id, price: await this.planPrice(input.upgrade.plan), quantity: 1 }],
        },
        after_completion: { type: 'redirect', redirect: { return_url: input.returnUrl } },
      };
    }
    const session = await this.call(() =>
      this.stripe.billingPortal.sessions.create(params, { idempotencyKey: keyFor('portal', input.sessionId) }),
    );
    return { url: session.url, providerSessionId: session.id };
  }

  async createSubscription(input: {
    userId: string;
    customerId: string;
    paymentMethodId: string;
    description: string;
    monthlyCents: number;
    ref: string;
  }) {
    const price = await this.call(() =>
      this.stripe.prices.create(
        {
          currency: 'usd',
          unit_amount: input.monthlyCents,
          recurring: { interval: 'month' },
          product_data: { name: input.description },
        },
        { idempotencyKey: keyFor('item-price', input.ref) },
      ),
    );
    const subscription = await this.call(() =>
      this.stripe.subscriptions.create(
        {
          customer: input.customerId,
          items: [{ price: price.id, quantity: 1 }],
          default_payment_method: input.paymentMethodId,
          payment_behavior: 'error_if_incomplete',
          metadata: { userId: input.userId, kind: 'item', ref: input.ref, description: input.description },
        },
        { idempotencyKey: keyFor('item-subscription', input.ref) },
      ),
    );
    return this.normalizeSubscription(subscription as unknown as Obj);
  }

  async cancelSubscription(subscriptionId: string): Promise<void> {
    try {
      await this.stripe.subscriptions.cancel(subscriptionId);
    } catch (err) {
      // Cancelled before (by us, the portal or Stripe): the goal is reached.
      const current = await this.stripe.subscriptions.retrieve(subscriptionId).catch(() => null);
      if (current?.status === 'canceled') return;
      throw providerError(err);
    }
  }

  async parseWebhook(rawBody: Buffer, signature: string | undefined): Promise<PaymentEvent> {
    let event: Stripe.Event;
    try {
      if (!signature) throw new Error('no Stripe-Signature header');
      event = this.stripe.webhooks.constructEvent(
        rawBody,
        signature,
        this.settings.webhookSecret,
        WEBHOOK_TOLERANCE_SECONDS,
      );
    } catch (err) {
      throw new AppError('invalid_signature', `webhook signature does not verify: ${(err as Error).message}`);
    }
    const object = event.data.object as unknown as Obj;
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.checkoutEvent(event.id, object);
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
        return { id: event.id, type: 'subscription.changed', subscription: this.normalizeSubscription(object) };
      case 'customer.subscription.deleted':
        return { id: event.id, type: 'subscription.deleted', subscription: this.normalizeSubscription(object) };
      case 'refund.created':
      case 'refund.updated': {
        // Applied once the money is on its way back; the top-up is named by its payment's metadata.
        const sessionId = object.status === 'succeeded' ? await this.topupOf(idOf(object.payment_intent)) : null;
        if (!sessionId) return { id: event.id, type: 'ignored', providerType: event.type };
        return {
          id: event.id,
          type: 'topup.refunded',
          sessionId,
          refunds: [{ refundId: object.id, amountCents: object.amount }],
        };
      }
      case 'charge.refunded': {
        // The charge's refunds, listed (the event's charge may not carry them): each succeeded one by its id,
        // so a refund also reported by refund.created is taken off once.
        const sessionId = await this.topupOf(idOf(object.payment_intent));
        if (!sessionId) return { id: event.id, type: 'ignored', providerType: event.type };
        const listed = await this.call(() => this.stripe.refunds.list({ charge: object.id, limit: 100 }));
        const refunds = listed.data
          .filter((r) => r.status === 'succeeded')
          .map((r) => ({ refundId: r.id, amountCents: r.amount }));
        if (refunds.length === 0) return { id: event.id, type: 'ignored', providerType: event.type };
        return { id: event.id, type: 'topup.refunded', sessionId, refunds };
      }
      case 'charge.dispute.created': {
        const sessionId = await this.topupOf(idOf(object.payment_intent));
        if (!sessionId || !(object.amount > 0)) return { id: event.id, type: 'ignored', providerType: event.type };
        return { id: event.id, type: 'topup.disputed', sessionId, disputeId: object.id, amountCents: object.amount };
      }
      case 'invoice.payment_failed': {
        // The subscription is re-read: its status (past_due, unpaid, …) is Stripe's current word, whatever the order of events.
        const subscriptionId = idOf(object.parent?.subscription_details?.subscription) ?? idOf(object.subscription);
        if (!subscriptionId) return { id: event.id, type: 'ignored', providerType: event.type };
        const subscription = await this.call(() => this.stripe.subscriptions.retrieve(subscriptionId));
        return {
          id: event.id,
          type: 'subscription.payment_failed',
          subscription: this.normalizeSubscription(subscription as unknown as Obj),
        };
      }
      case 'payment_method.detached': {
        const customerId = idOf((event.data.previous_attributes as Obj | undefined)?.customer);
        if (!customerId) return { id: event.id, type: 'ignored', providerType: event.type };
        return { id: event.id, type: 'card.removed', customerId, paymentMethodId: object.id };
      }
      case 'invoice.paid': {
        // A renewal: the subscription (re-read, so the period is current) moves on.
        const subscriptionId = idOf(object.parent?.subscription_details?.subscription) ?? idOf(object.subscription);
        if (!subscriptionId) return { id: event.id, type: 'ignored', providerType: event.type };
        const subscription = await this.call(() => this.stripe.subscriptions.retrieve(subscriptionId));
        return {
          id: event.id,
          type: 'subscription.changed',
          subscription: this.normalizeSubscription(subscription as unknown as Obj),
        };
      }
      default:
        return { id: event.id, type: 'ignored', providerType: event.type };
    }
  }

  /** Our top-up session a payment intent paid for (its metadata names it), or null. */
  private async topupOf(paymentIntentId: string | null): Promise<string | null> {
    if (!paymentIntentId) return null;
    const intent = await this.call(() => this.stripe.paymentIntents.retrieve(paymentIntentId));
    const sessionId = intent.metadata?.sessionId;
    return intent.metadata?.purpose === 'topup' && sessionId ? sessionId : null;
  }

  /** The session re-read from Stripe with what it created (payment method, subscription) expanded. */
  private async checkoutEvent(eventId: string, object: Obj): Promise<PaymentEvent> {
    const sessionId = object.metadata?.sessionId;
    if (typeof sessionId !== 'string')
      return { id: eventId, type: 'ignored', providerType: 'checkout.session.completed' };
    const session = (await this.call(() =>
      this.stripe.checkout.sessions.retrieve(object.id, {
        expand: ['payment_intent.payment_method', 'setup_intent.payment_method', 'subscription.default_payment_method'],
      }),
    )) as unknown as Obj;
    const method =
      session.payment_intent?.payment_method ??
      session.setup_intent?.payment_method ??
      session.subscription?.default_payment_method ??
      null;
    const card: PaymentCard | null =
      method && typeof method === 'object'
        ? { id: method.id, brand: method.card?.brand ?? null, last4: method.card?.last4 ?? null }
        : null;
    return {
      id: eventId,
      type: 'checkout.completed',
      sessionId,
      providerSessionId: session.id,
      paid:
        session.status === 'complete' &&
        (session.payment_status === 'paid' || session.payment_status === 'no_payment_required'),
      amountCents: typeof session.amount_total === 'number' ? session.amount_total : null,
      customerId: idOf(session.customer),
      card,
      subscription:
        session.subscription && typeof session.subscription === 'object'
          ? this.normalizeSubscription(session.subscription)
          : null,
    };
  }

  private normalizeSubscription(sub: Obj): ProviderSubscription {
    const item = sub.items?.data?.[0] as Obj | undefined;
    const price = (item?.price ?? null) as Obj | null;
    const plan = price
      ? this.plans.find((p) => p.stripePriceId === price.id || lookupKey(p) === price.lookup_key)
      : undefined;
    return {
      id: sub.id,
      customerId: idOf(sub.customer) ?? '',
      status: sub.status,
      planKey: plan?.key ?? null,
      monthlyCents: typeof price?.unit_amount === 'number' ? price.unit_amount * (item?.quantity ?? 1) : null,
      periodStart: ms(item?.current_period_start ?? sub.current_period_start),
      periodEnd: ms(item?.current_period_end ?? sub.current_period_end),
      metadata: { ...(sub.metadata ?? {}) },
    };
  }

  /** The plan's price: the configured id, or one found (or created once) by lookup key. */
  private async planPrice(plan: PlanPrice): Promise<string> {
    if (plan.stripePriceId) return plan.stripePriceId;
    const key = lookupKey(plan);
    const known = this.prices.get(key);
    if (known) return known;
    const found = await this.call(() => this.stripe.prices.list({ lookup_keys: [key], active: true, limit: 1 }));
    const price =
      found.data[0] ??
      (await this.call(() =>
        this.stripe.prices.create(
          {
            currency: 'usd',
            unit_amount: plan.monthlyCents,
            recurring: { interval: 'month' },
            lookup_key: key,
            product_data: { name: `Workspace ${plan.name}` },
            metadata: { plan: plan.key },
          },
          { idempotencyKey: keyFor('plan-price', key) },
        ),
      ));
    this.prices.set(key, price.id);
    return price.id;
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (err) {
      throw providerError(err);
    }
  }
}

/** The lookup key of a plan's price when no price id is configured; a new amount gets a new price. */
export const lookupKey = (plan: PlanPrice) => `workspace_plan_${plan.key}_${plan.monthlyCents}`;

function providerError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // A declined card is the customer's to fix (another card), not an outage: 400, not 502.
  if (err instanceof loadStripe().errors.StripeCardError)
    return new AppError('provider_refused', `the card was declined: ${message}`);
  return new AppError('provider_error', `payment provider: ${message}`);
}
