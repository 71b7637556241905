// The one place a webhook leaves the machine, through the service's one
// outbound client (src/lib/outbound-http.ts): unless private targets are
// allowed, every address a connection goes to is checked at connect time
// (after DNS, so a name that resolves to a private address, or changes its
// answer between a check and the connection, is refused). A 2xx answer ends
// the delivery; anything else (another status, a redirect — not followed —, a
// refused address, a timeout) is a failed attempt that the worker retries.
import { type OutboundHttp, type OutboundHttpOptions, createOutboundHttp } from '../../lib/outbound-http.js';
import type { WebhookHeaders } from '../../lib/standard-webhooks.js';

export interface SendOptions {
  timeoutMs: number;
  /** Loopback and private targets allowed (development, WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
}

export interface SendResult {
  statusCode: number;
}

export type SendWebhook = (
  url: string,
  headers: WebhookHeaders,
  body: string,
  options: SendOptions,
) => Promise<SendResult>;

export interface WebhookSender {
  send: SendWebhook;
  /** Closes the pooled connections (app close). */
  close(): Promise<void>;
}

/** Receivers answer with a status; their body is not read beyond this. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface CustomerEndpointOptions extends Pick<OutboundHttpOptions, 'lookup'> {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  userAgent: string;
}

/**
 * The client for signed requests to an address a customer gave us (webhook
 * deliveries, custom tools): only public addresses unless allowPrivate (the
 * webhook address policy), and redirects answered as they are, never
 * followed, so a request and its headers never leave the origin that was
 * checked and given.
 */
export function createCustomerEndpointHttp(options: CustomerEndpointOptions): OutboundHttp {
  return createOutboundHttp({ ...options, maxRedirects: 0 });
}

/** A sender with one pooled client per policy (the worker always sends with the same one). `lookup` is for tests. */
export function createWebhookSender(extra: Pick<OutboundHttpOptions, 'lookup'> = {}): WebhookSender {
  const clients = new Map<string, OutboundHttp>();
  const clientFor = (options: SendOptions): OutboundHttp => {
    const key = `${options.allowPrivate}:${options.timeoutMs}`;
    let client = clients.get(key);
    if (!client) {
      client = createCustomerEndpointHttp({
        ...extra,
        allowPrivate: options.allowPrivate,
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        userAgent: 'workspace-api-webhooks/1',
      });
      clients.set(key, client);
    }
    return client;
  };
  return {
    send: async (url, headers, body, options) => {
      const res = await clientFor(options)(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      });
      await res.body?.cancel().catch(() => undefined);
      return { statusCode: res.status };
    },
    close: async () => {
      const open = [...clients.values()];
      clients.clear();
      await Promise.all(open.map((c) => c.close()));
    },
  };
}
