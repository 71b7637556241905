// Offline stand-in for the payment provider. Checkout and portal pages are
// served by the service itself under /api/sandbox/…; submitting one produces
// the same normalized event a Stripe webhook would, and billing handles it
// through the same code. Ids are derived from the inputs, so retries of the
// same request give the same customer and subscription, as Stripe's
// idempotency keys do.
import { createHash, randomUUID } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import { addMonthsUtc } from '../../lib/time.js';
import type {
  CheckoutInput,
  PaymentCard,
  PaymentEvent,
  PaymentsProvider,
  PlanPrice,
  PortalInput,
  ProviderSubscription,
} from './interface.js';

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 24);

/** What a submitted sandbox page completes. */
export interface SandboxSession {
  id: string;
  userId: string;
  customerId: string;
  purpose: 'topup' | 'card' | 'plan' | 'upgrade';
  amountCents: number | null;
  plan: PlanPrice | null;
  /** Upgrades: the subscription whose price changes. */
  subscription: ProviderSubscription | null;
}

export class SandboxPaymentsProvider implements PaymentsProvider {
  readonly name = 'sandbox';
  readonly sandbox = true;
  constructor(private readonly publicUrl: string) {}

  async createCustomer(input: { userId: string }) {
    return { customerId: `cus_sandbox_${digest(input.userId)}` };
  }

  async createCheckout(input: CheckoutInput) {
    return {
      url: `${this.publicUrl}/api/sandbox/checkout/${input.sessionId}`,
      providerSessionId: `cs_sandbox_${input.sessionId}`,
    };
  }

  async createPortal(input: PortalInput) {
    const page = input.upgrade ? 'checkout' : 'portal';
    return {
      url: `${this.publicUrl}/api/sandbox/${page}/${input.sessionId}`,
      providerSessionId: `bps_sandbox_${input.sessionId}`,
    };
  }

  async createSubscription(
    input: { userId: string; customerId: string; description: string; monthlyCents: number; ref: string },
    now = Date.now(),
  ) {
    return {
      id: `sub_sandbox_${digest(`item:${input.ref}`)}`,
      customerId: input.customerId,
      status: 'active',
      planKey: null,
      monthlyCents: input.monthlyCents,
      periodStart: now,
      periodEnd: addMonthsUtc(now, 1),
      metadata: { userId: input.userId, ref: input.ref },
    };
  }

  async cancelSubscription(): Promise<void> {}

  async parseWebhook(): Promise<PaymentEvent> {
    throw new AppError(
      'not_found',
      'Stripe webhooks are not accepted: the sandbox payment provider is active (set STRIPE_SECRET_KEY)',
    );
  }

  /** The card the sandbox "saves" for a user: a Visa ending 4242, like Stripe's test card. */
  cardFor(userId: string): PaymentCard {
    return { id: `pm_sandbox_${digest(`card:${userId}`)}`, brand: 'visa', last4: '4242' };
  }

  /** What the sandbox portal's "Cancel plan" reports, as Stripe reports a cancellation made in its portal. */
  cancellation(subscription: ProviderSubscription): PaymentEvent {
    return {
      id: `evt_sandbox_cancel_${subscription.id}`,
      type: 'subscription.deleted',
      subscription: { ...subscription, status: 'canceled' },
    };
  }

  /** What the sandbox portal's "Remove card" reports (payment_method.detached at Stripe). */
  cardRemoval(customerId: string, paymentMethodId: string): PaymentEvent {
    return { id: `evt_sandbox_detach_${randomUUID()}`, type: 'card.removed', customerId, paymentMethodId };
  }

  /** The event that submitting a sandbox page produces; its id is the session's, so a second submit is a duplicate. */
  completion(session: SandboxSession, now: number): PaymentEvent {
    const id = `evt_sandbox_${session.id}`;
    if (session.purpose === 'upgrade') {
      if (!session.subscription || !session.plan) throw new AppError('conflict', 'there is no subscription to change');
      return {
        id,
        type: 'subscription.changed',
        subscription: { ...session.subscription, planKey: session.plan.key, monthlyCents: session.plan.monthlyCents },
      };
    }
    const subscription: ProviderSubscription | null =
      session.purpose === 'plan' && session.plan
        ? {
            id: `sub_sandbox_${digest(`plan:${session.id}`)}`,
            customerId: session.customerId,
            status: 'active',
            planKey: session.plan.key,
            monthlyCents: session.plan.monthlyCents,
            periodStart: now,
            periodEnd: addMonthsUtc(now, 1),
            metadata: { userId: session.userId, plan: session.plan.key },
          }
        : null;
    return {
      id,
      type: 'checkout.completed',
      sessionId: session.id,
      providerSessionId: `cs_sandbox_${session.id}`,
      paid: true,
      amountCents:
        session.purpose === 'topup'
          ? session.amountCents
          : session.purpose === 'plan'
            ? (session.plan?.monthlyCents ?? null)
            : 0,
      customerId: session.customerId,
      card: this.cardFor(session.userId),
      subscription,
    };
  }
}
