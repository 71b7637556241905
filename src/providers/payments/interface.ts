// What billing asks of a payment provider (Stripe, or the sandbox stand-in).
// Provider events come back normalized as PaymentEvent, so the webhook route
// and the sandbox checkout pages complete through the same handler.

export interface PlanPrice {
  key: string;
  name: string;
  monthlyCents: number;
  /** A price id the operator created at the provider; without it the provider finds or creates one. */
  stripePriceId?: string;
}

export interface CheckoutInput {
  /** Our session id (billing_sessions.id): the provider's session refers back to it. */
  sessionId: string;
  userId: string;
  customerId: string;
  purpose: 'topup' | 'card' | 'plan';
  /** Top-ups: the amount charged. */
  amountCents?: number;
  /** Plan subscriptions: the plan. */
  plan?: PlanPrice;
  successUrl: string;
  cancelUrl: string;
  expiresAt: number;
}

export interface PortalInput {
  sessionId: string;
  customerId: string;
  returnUrl: string;
  /** A confirmation flow that moves this subscription to another plan's price (the same subscription). */
  upgrade?: { subscriptionId: string; plan: PlanPrice };
}

export interface PaymentCard {
  id: string;
  brand: string | null;
  last4: string | null;
}

export interface ProviderSubscription {
  id: string;
  customerId: string;
  /** The provider's status: active, trialing, past_due, incomplete, canceled, … */
  status: string;
  /** The plan whose price the subscription carries, or null (item subscriptions). */
  planKey: string | null;
  monthlyCents: number | null;
  /** Epoch ms. */
  periodStart: number | null;
  periodEnd: number | null;
  metadata: Record<string, string>;
}

export type PaymentEvent =
  | {
      id: string;
      type: 'checkout.completed';
      /** Our session id. */
      sessionId: string;
      /** The provider's session id (what createCheckout returned for it). */
      providerSessionId: string;
      /** Money was collected (top-ups), or nothing had to be (setup, subscriptions with a trial). */
      paid: boolean;
      amountCents: number | null;
      customerId: string | null;
      card: PaymentCard | null;
      subscription: ProviderSubscription | null;
    }
  /** `subscription.payment_failed`: an invoice of it could not be paid (the subscription as re-read after that, e.g. past_due). */
  | {
      id: string;
      type: 'subscription.changed' | 'subscription.deleted' | 'subscription.payment_failed';
      subscription: ProviderSubscription;
    }
  /**
   * Money of a top-up was given back to the customer (refunds made at the provider, e.g. in its dashboard):
   * each succeeded refund by its own id, so the refund's several events (refund.created, charge.refunded) take it once.
   */
  | { id: string; type: 'topup.refunded'; sessionId: string; refunds: Array<{ refundId: string; amountCents: number }> }
  /** The customer disputed a top-up's payment (a chargeback): the money is held by the bank from now on. */
  | { id: string; type: 'topup.disputed'; sessionId: string; disputeId: string; amountCents: number }
  /** A card was removed from the customer (in the portal, or by the provider): it is no longer on file. */
  | { id: string; type: 'card.removed'; customerId: string; paymentMethodId: string }
  | { id: string; type: 'ignored'; providerType: string };

export interface PaymentsProvider {
  readonly name: string;
  readonly sandbox: boolean;
  /** Creates the provider's customer for a user (idempotent per user). */
  createCustomer(input: { userId: string; email: string | null }): Promise<{ customerId: string }>;
  /** Opens a checkout session; returns the page the customer goes to. */
  createCheckout(input: CheckoutInput): Promise<{ url: string; providerSessionId: string }>;
  /** Opens a customer portal session (or a plan-change confirmation inside it). */
  createPortal(input: PortalInput): Promise<{ url: string; providerSessionId: string }>;
  /** A monthly subscription for a bought item, charged to the card on file. Idempotent by `ref`. */
  createSubscription(input: {
    userId: string;
    customerId: string;
    paymentMethodId: string;
    description: string;
    monthlyCents: number;
    ref: string;
  }): Promise<ProviderSubscription>;
  /** Cancels at once; cancelling an already-cancelled subscription succeeds. */
  cancelSubscription(subscriptionId: string): Promise<void>;
  /** Verifies a webhook's signature on the raw body and normalizes it; AppError `invalid_signature` when it does not verify. */
  parseWebhook(rawBody: Buffer, signature: string | undefined): Promise<PaymentEvent>;
}
