// What the sandbox checkout and portal pages do: show a session, and complete
// it (or a portal action) by handing the event Stripe would send to the same
// PaymentEventHandler the webhook uses.
import { AppError, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { PaymentEvent, ProviderSubscription } from '../../providers/payments/interface.js';
import type { SandboxSession } from '../../providers/payments/sandbox.js';
import { type Catalog, priceOf } from './catalog.js';
import { type PaymentEventHandler, asProviderSubscription } from './payment-events.js';
import type { BillingService } from './service.js';
import type { BillingStore } from './store.js';

/** The sandbox provider's event builders. */
export interface SandboxEvents {
  completion(session: SandboxSession, now: number): PaymentEvent;
  cancellation(subscription: ProviderSubscription): PaymentEvent;
  cardRemoval(customerId: string, paymentMethodId: string): PaymentEvent;
}

export class SandboxBilling {
  constructor(
    private readonly store: BillingStore,
    private readonly events: PaymentEventHandler,
    private readonly billing: BillingService,
    private readonly catalog: Catalog,
    private readonly sandbox: SandboxEvents,
    private readonly clock: Clock,
  ) {}

  /** What a sandbox checkout or portal page shows. */
  async session(id: string, page: 'checkout' | 'portal') {
    const session = await this.store.session(id);
    if (!session || (page === 'portal') !== (session.purpose === 'portal')) throw notFound('session');
    const plan = session.plan_key ? (this.catalog.plan(session.plan_key) ?? null) : null;
    const expired = session.status === 'open' && session.expires_at <= this.clock.now();
    return { session, plan, expired };
  }

  /** The sandbox portal's contents: plan, card, balance and recent ledger entries. */
  async portal(userId: string) {
    const [state, customer, entries] = await Promise.all([
      this.billing.state(userId),
      this.store.customer(userId),
      this.store.listEntries(userId, 50),
    ]);
    return { state, customer, entries };
  }

  /** Completes a sandbox checkout as if the customer paid (a second submit is a duplicate event). */
  async complete(id: string) {
    const { session, plan, expired } = await this.session(id, 'checkout');
    if (expired) throw new AppError('conflict', 'this checkout session has expired');
    const customer = await this.store.customer(session.user_id);
    if (!customer) throw notFound('session');
    const live = session.purpose === 'upgrade' ? await this.store.livePlan(session.user_id) : undefined;
    const event = this.sandbox.completion(
      {
        id: session.id,
        userId: session.user_id,
        customerId: customer.customer_id,
        purpose: session.purpose as SandboxSession['purpose'],
        amountCents: session.amount_cents,
        plan: plan ? priceOf(plan) : null,
        subscription: live ? asProviderSubscription(live, customer.customer_id) : null,
      },
      this.clock.now(),
    );
    await this.events.handle(event);
    if (session.purpose === 'upgrade') await this.store.completeSession(session.id, this.clock.now());
    return session;
  }

  /** A portal action: cancel the plan or remove the card, reported as Stripe reports them. */
  async portalAction(id: string, action: 'cancel-plan' | 'remove-card'): Promise<void> {
    const { session, expired } = await this.session(id, 'portal');
    if (expired) throw new AppError('conflict', 'this portal session has expired');
    const customer = await this.store.customer(session.user_id);
    if (!customer) throw notFound('customer');
    if (action === 'remove-card') {
      if (!customer.payment_method_id) throw new AppError('conflict', 'there is no card on file');
      await this.events.handle(this.sandbox.cardRemoval(customer.customer_id, customer.payment_method_id));
      return;
    }
    const live = await this.store.livePlan(session.user_id);
    if (!live) throw new AppError('conflict', 'there is no plan to cancel');
    await this.events.handle(this.sandbox.cancellation(asProviderSubscription(live, customer.customer_id)));
  }
}
