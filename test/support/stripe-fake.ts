// A local server speaking the part of Stripe's API the payments provider
// uses (customers, prices, checkout sessions, billing portal sessions,
// subscriptions; retrieve with `expand[]`), form-encoded with Stripe's
// bracket notation, Bearer secret-key auth, Idempotency-Key replay and
// Stripe's error JSON. Test helpers act as the customer (pay a checkout,
// confirm a portal plan change) and as Stripe's clock (renewals), and build
// the webhook events Stripe would send, signed as Stripe signs them.
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

type Obj = Record<string, any>;

export interface StripeRequest {
  method: string;
  path: string;
  params: Obj;
  idempotencyKey: string | undefined;
}

export interface SignedWebhook {
  event: Obj;
  body: string;
  headers: Record<string, string>;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Parses Stripe's form encoding: a[b][0][c]=v → { a: { b: [{ c: 'v' }] } }. */
export function parseStripeForm(text: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    path.forEach((segment, i) => {
      const name = segment === '' ? String(Object.keys(node).length) : segment;
      if (i === path.length - 1) node[name] = value;
      else node = node[name] ??= {};
    });
  }
  const arrays = (value: unknown): unknown => {
    if (!value || typeof value !== 'object') return value;
    const entries = Object.entries(value as Obj).map(([k, v]) => [k, arrays(v)] as const);
    if (entries.length && entries.every(([k]) => /^\d+$/.test(k)))
      return entries.sort((a, b) => Number(a[0]) - Number(b[0])).map(([, v]) => v);
    return Object.fromEntries(entries);
  };
  return arrays(root) as Obj;
}

export class StripeFake {
  readonly secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  readonly webhookSecret = `whsec_${randomBytes(16).toString('base64')}`;
  apiBase = '';
  readonly requests: StripeRequest[] = [];
  readonly objects = new Map<string, Obj>();
  private readonly idempotent = new Map<string, { status: number; body: string }>();
  failures: Array<{ path: RegExp; status: number; message: string }> = [];
  private server = createServer((req, res) => void this.handle(req, res));

  static async start(): Promise<StripeFake> {
    const fake = new StripeFake();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.apiBase = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    return fake;
  }

  /** Environment that points the service at this server. */
  env(): Record<string, string> {
    return {
      STRIPE_SECRET_KEY: this.secretKey,
      STRIPE_WEBHOOK_SECRET: this.webhookSecret,
      STRIPE_API_BASE: this.apiBase,
    };
  }

  /** The next request whose path matches fails with Stripe's error answer. */
  failNext(path: RegExp, status = 402, message = 'Your card was declined.'): void {
    this.failures.push({ path, status, message });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  // ---- acting as the customer and as Stripe

  /** Pays (or completes) a checkout session as the customer would; returns the checkout.session.completed event. */
  pay(sessionId: string, card = { brand: 'visa', last4: '4242' }): Obj {
    const session = this.get(sessionId);
    const customer = session.customer as string;
    const pm = this.put({
      id: newId('pm'),
      object: 'payment_method',
      type: 'card',
      customer,
      card: { ...card, exp_month: 12, exp_year: 2030 },
    });
    if (session.mode === 'payment') {
      const pi = this.put({
        id: newId('pi'),
        object: 'payment_intent',
        amount: session.amount_total,
        currency: 'usd',
        status: 'succeeded',
        customer,
        payment_method: pm.id,
        metadata: session.payment_intent_data?.metadata ?? {},
      });
      Object.assign(session, { payment_intent: pi.id, payment_status: 'paid' });
    } else if (session.mode === 'setup') {
      const seti = this.put({
        id: newId('seti'),
        object: 'setup_intent',
        status: 'succeeded',
        customer,
        payment_method: pm.id,
      });
      Object.assign(session, { setup_intent: seti.id, payment_status: 'no_payment_required' });
    } else {
      const price = this.get(session.line_items[0].price);
      const sub = this.createSubscriptionObject({
        customer,
        price,
        metadata: session.subscription_data?.metadata ?? {},
        default_payment_method: pm.id,
      });
      Object.assign(session, { subscription: sub.id, payment_status: 'paid' });
    }
    session.status = 'complete';
    return this.event('checkout.session.completed', session);
  }

  /** Confirms a portal session's subscription_update_confirm flow: the same subscription item moves to the new price. */
  confirmPortal(portalSessionId: string): Obj {
    const portal = this.get(portalSessionId);
    const flow = portal.flow?.subscription_update_confirm;
    if (!flow) throw new Error('this portal session has no subscription update flow');
    const sub = this.get(flow.subscription);
    const change = flow.items[0];
    const item = sub.items.data.find((i: Obj) => i.id === change.id);
    item.price = this.get(change.price);
    return this.event('customer.subscription.updated', sub);
  }

  /** The next monthly period starts and its invoice is paid; returns the invoice.paid event. */
  renew(subscriptionId: string): Obj {
    const sub = this.get(subscriptionId);
    const item = sub.items.data[0];
    const length = item.current_period_end - item.current_period_start;
    item.current_period_start = item.current_period_end;
    item.current_period_end += length;
    sub.status = 'active';
    const invoice = this.put({
      id: newId('in'),
      object: 'invoice',
      status: 'paid',
      customer: sub.customer,
      amount_paid: item.price.unit_amount,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: sub.metadata } },
    });
    return this.event('invoice.paid', invoice);
  }

  /** Stripe ends the subscription (e.g. payment failed for good); returns customer.subscription.deleted. */
  end(subscriptionId: string): Obj {
    const sub = this.get(subscriptionId);
    sub.status = 'canceled';
    return this.event('customer.subscription.deleted', sub);
  }

  /** The merchant refunds (part of) a paid top-up; returns refund.created (status succeeded, or pending to be settled later). */
  refund(sessionId: string, amount: number, status: 'succeeded' | 'pending' = 'succeeded'): Obj {
    const session = this.get(sessionId);
    const refund = this.put({
      id: newId('re'),
      object: 'refund',
      amount,
      currency: 'usd',
      payment_intent: session.payment_intent,
      status,
    });
    return this.event('refund.created', refund);
  }

  /** The charge behind a paid top-up (created on first need, as Stripe creates it with the payment). */
  chargeOf(sessionId: string): Obj {
    const intent = this.get(this.get(sessionId).payment_intent);
    intent.latest_charge ??= this.put({
      id: newId('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_refunded: 0,
      refunded: false,
      disputed: false,
      payment_intent: intent.id,
      customer: intent.customer,
      status: 'succeeded',
    }).id;
    return this.get(intent.latest_charge);
  }

  /** The merchant refunds (part of) a top-up's charge; returns charge.refunded (and keeps the refund, listed by GET /v1/refunds?charge=). */
  refundCharge(sessionId: string, amount: number): Obj {
    const charge = this.chargeOf(sessionId);
    this.put({
      id: newId('re'),
      object: 'refund',
      amount,
      currency: 'usd',
      charge: charge.id,
      payment_intent: charge.payment_intent,
      status: 'succeeded',
    });
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded >= charge.amount;
    return this.event('charge.refunded', charge);
  }

  /** The refund.created event of the latest refund of a top-up's charge (Stripe sends both for one refund). */
  refundCreatedOf(sessionId: string): Obj {
    const charge = this.chargeOf(sessionId);
    const refund = [...this.objects.values()].filter((o) => o.object === 'refund' && o.charge === charge.id).at(-1);
    return this.event('refund.created', refund!);
  }

  /** The cardholder disputes a top-up's charge; returns charge.dispute.created. */
  dispute(sessionId: string, amount?: number): Obj {
    const charge = this.chargeOf(sessionId);
    charge.disputed = true;
    const dispute = this.put({
      id: newId('dp'),
      object: 'dispute',
      amount: amount ?? charge.amount,
      currency: 'usd',
      charge: charge.id,
      payment_intent: charge.payment_intent,
      reason: 'fraudulent',
      status: 'needs_response',
    });
    return this.event('charge.dispute.created', dispute);
  }

  /** A renewal invoice of the subscription cannot be charged: it goes past_due; returns invoice.payment_failed. */
  failInvoice(subscriptionId: string): Obj {
    const sub = this.get(subscriptionId);
    sub.status = 'past_due';
    const item = sub.items.data[0];
    const invoice = this.put({
      id: newId('in'),
      object: 'invoice',
      status: 'open',
      customer: sub.customer,
      amount_due: item.price.unit_amount,
      attempt_count: 1,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: sub.metadata } },
    });
    return this.event('invoice.payment_failed', invoice);
  }

  /** A pending refund completes; returns refund.updated. */
  settleRefund(refundId: string): Obj {
    const refund = this.get(refundId);
    refund.status = 'succeeded';
    return this.event('refund.updated', refund);
  }

  /** The customer removes a card (e.g. in the portal); returns payment_method.detached. */
  detach(paymentMethodId: string): Obj {
    const pm = this.get(paymentMethodId);
    const customer = pm.customer;
    pm.customer = null;
    const event = this.event('payment_method.detached', pm);
    event.data.previous_attributes = { customer };
    return event;
  }

  event(type: string, object: Obj): Obj {
    return {
      id: newId('evt'),
      object: 'event',
      api_version: '2026-10-28.endive',
      created: nowSeconds(),
      livemode: false,
      type,
      data: { object: structuredClone(object) },
      pending_webhooks: 1,
    };
  }

  /** The request Stripe would send for `event`: the JSON body and a Stripe-Signature header (t=…,v1=…). */
  signed(event: Obj, options: { secret?: string; timestamp?: number } = {}): SignedWebhook {
    const body = JSON.stringify(event, null, 2);
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: options.secret ?? this.webhookSecret,
      timestamp: options.timestamp,
    });
    return {
      event,
      body,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': signature,
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
    };
  }

  /** Delivers an event as Stripe does: an HTTP POST of the signed JSON to the endpoint; answers the endpoint's status and body. */
  async send(event: Obj, endpoint: string): Promise<{ status: number; body: string }> {
    const { body, headers } = this.signed(event);
    const res = await fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, body: await res.text() };
  }

  get(id: string): Obj {
    const object = this.objects.get(id);
    if (!object) throw new Error(`no such object ${id}`);
    return object;
  }

  // ---- the API

  private put(object: Obj): Obj {
    this.objects.set(object.id, object);
    return object;
  }

  private createSubscriptionObject(input: {
    customer: string;
    price: Obj;
    metadata: Obj;
    default_payment_method: string;
    quantity?: number;
  }): Obj {
    const start = nowSeconds();
    const end = Math.floor(
      new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, new Date().getUTCDate())).getTime() /
        1000,
    );
    const id = newId('sub');
    return this.put({
      id,
      object: 'subscription',
      customer: input.customer,
      status: 'active',
      default_payment_method: input.default_payment_method,
      metadata: input.metadata,
      items: {
        object: 'list',
        data: [
          {
            id: newId('si'),
            object: 'subscription_item',
            subscription: id,
            price: input.price,
            quantity: input.quantity ?? 1,
            current_period_start: start,
            current_period_end: end,
          },
        ],
      },
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const params =
      req.method === 'GET' ? parseStripeForm(url.search.slice(1)) : parseStripeForm(Buffer.concat(chunks).toString());
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ method: req.method ?? '', path: url.pathname, params, idempotencyKey });
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      if (idempotencyKey && req.method === 'POST')
        this.idempotent.set(`${url.pathname}:${idempotencyKey}`, { status, body: text });
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') }).end(text);
    };
    const fail = (status: number, message: string, type = 'invalid_request_error', code?: string) =>
      send(status, { error: { type, message, ...(code ? { code } : {}) } });

    if (req.headers.authorization !== `Bearer ${this.secretKey}`) return fail(401, 'Invalid API Key provided.');
    if (idempotencyKey && req.method === 'POST') {
      const replay = this.idempotent.get(`${url.pathname}:${idempotencyKey}`);
      if (replay) {
        res
          .writeHead(replay.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' })
          .end(replay.body);
        return;
      }
    }
    const failure = this.failures.findIndex((f) => f.path.test(url.pathname));
    if (failure >= 0) {
      const [f] = this.failures.splice(failure, 1);
      return fail(
        f.status,
        f.message,
        f.status === 402 ? 'card_error' : 'api_error',
        f.status === 402 ? 'card_declined' : undefined,
      );
    }
    try {
      const answer = this.route(req.method ?? 'GET', url.pathname, params);
      if (!answer) return fail(404, `Unrecognized request URL (${req.method}: ${url.pathname}).`);
      send(200, answer);
    } catch (err) {
      const e = err as Error & { status?: number };
      fail(e.status ?? 400, e.message, 'invalid_request_error', e.status === 404 ? 'resource_missing' : undefined);
    }
  }

  private route(method: string, path: string, p: Obj): Obj | null {
    const missing = (id: string) => Object.assign(new Error(`No such object: '${id}'`), { status: 404 });
    const find = (id: string) => {
      const o = this.objects.get(id);
      if (!o) throw missing(id);
      return o;
    };
    const expand = (object: Obj) => {
      const copy = structuredClone(object);
      for (const path of (p.expand ?? []) as string[]) {
        let node: Obj | null = copy;
        for (const segment of path.split('.')) {
          if (!node) break;
          const value: unknown = node[segment];
          if (typeof value === 'string' && this.objects.has(value))
            node[segment] = structuredClone(this.objects.get(value));
          node = (node[segment] as Obj) ?? null;
        }
      }
      return copy;
    };
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      return this.put({ id: newId('cus'), object: 'customer', email: p.email ?? null, metadata: p.metadata ?? {} });
    }
    if (method === 'POST' && path === '/v1/prices') {
      const product = this.put({ id: newId('prod'), object: 'product', name: p.product_data?.name ?? 'Product' });
      return this.put({
        id: newId('price'),
        object: 'price',
        active: true,
        currency: p.currency,
        unit_amount: Number(p.unit_amount),
        recurring: p.recurring ? { interval: p.recurring.interval, interval_count: 1 } : null,
        lookup_key: p.lookup_key ?? null,
        product: product.id,
        metadata: p.metadata ?? {},
      });
    }
    if (method === 'GET' && path === '/v1/prices') {
      const keys: string[] = p.lookup_keys ?? [];
      const data = [...this.objects.values()].filter(
        (o) => o.object === 'price' && o.active && keys.includes(o.lookup_key),
      );
      return { object: 'list', data, has_more: false, url: '/v1/prices' };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      find(p.customer);
      if (!['payment', 'setup', 'subscription'].includes(p.mode)) throw new Error('Invalid mode');
      if (!p.success_url) throw new Error('Missing required param: success_url.');
      const items = (p.line_items ?? []) as Obj[];
      if (p.mode === 'subscription') for (const item of items) find(item.price);
      const amount = items.reduce(
        (sum, i) =>
          sum +
          Number(i.price_data?.unit_amount ?? (i.price ? find(i.price).unit_amount : 0)) * Number(i.quantity ?? 1),
        0,
      );
      const id = `cs_test_${randomBytes(16).toString('hex')}`;
      return this.put({
        id,
        object: 'checkout.session',
        url: `${this.apiBase}/c/pay/${id}`,
        mode: p.mode,
        status: 'open',
        payment_status: 'unpaid',
        customer: p.customer,
        client_reference_id: p.client_reference_id ?? null,
        metadata: p.metadata ?? {},
        amount_total: p.mode === 'setup' ? null : amount,
        currency: 'usd',
        line_items: items,
        subscription_data: p.subscription_data ?? null,
        payment_intent_data: p.payment_intent_data ?? null,
        payment_intent: null,
        setup_intent: null,
        subscription: null,
        success_url: p.success_url,
        cancel_url: p.cancel_url ?? null,
      });
    }
    if (method === 'GET' && (m = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) return expand(find(m[1]));
    if (method === 'GET' && (m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) return expand(find(m[1]));
    if (method === 'GET' && path === '/v1/refunds') {
      const data = [...this.objects.values()]
        .filter((o) => o.object === 'refund' && (!p.charge || o.charge === p.charge))
        .reverse();
      return { object: 'list', data, has_more: false, url: '/v1/refunds' };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      find(p.customer);
      if (p.flow_data?.type === 'subscription_update_confirm') {
        const sub = find(p.flow_data.subscription_update_confirm.subscription);
        if (sub.customer !== p.customer) throw new Error('The subscription does not belong to this customer');
        find(p.flow_data.subscription_update_confirm.items[0].price);
      }
      const id = newId('bps');
      return this.put({
        id,
        object: 'billing_portal.session',
        customer: p.customer,
        return_url: p.return_url ?? null,
        url: `${this.apiBase}/p/session/${id}`,
        flow: p.flow_data ?? null,
      });
    }
    if (method === 'POST' && path === '/v1/subscriptions') {
      const customer = find(p.customer);
      const pm = p.default_payment_method ? find(p.default_payment_method) : null;
      if (!pm)
        throw Object.assign(new Error('This customer has no attached payment source or default payment method.'), {
          status: 400,
        });
      return this.createSubscriptionObject({
        customer: customer.id,
        price: find(p.items[0].price),
        metadata: p.metadata ?? {},
        default_payment_method: pm.id,
        quantity: Number(p.items[0].quantity ?? 1),
      });
    }
    if (method === 'GET' && (m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) return expand(find(m[1]));
    if (method === 'DELETE' && (m = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const sub = find(m[1]);
      if (sub.status === 'canceled') throw new Error('This subscription has already been canceled.');
      sub.status = 'canceled';
      return sub;
    }
    return null;
  }
}
