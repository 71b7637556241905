// The one place a webhook leaves the machine. A 2xx answer ends the delivery;
// anything else (another status, a redirect, a refused connection, a timeout)
// is a failed attempt that the worker retries.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookHeaders } from '../../lib/standard-webhooks.js';

export interface SendOptions {
  timeoutMs: number;
  /** Loopback and private targets allowed (development, WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
}

export interface SendResult {
  statusCode: number;
}

export type SendWebhook = (url: string, headers: WebhookHeaders, body: string, options: SendOptions) => Promise<SendResult>;

export class PrivateAddressError extends Error {}

/** True for an address that is not a public unicast address (loopback, private, link-local, metadata, …). */
export function isPrivateAddress(address: string): boolean {
  try {
    return ipaddr.process(address).range() !== 'unicast';
  } catch {
    return true;
  }
}

// MERGE: replace the address check and fetch below with src/lib/outbound-http.ts
// (the knowledge branch's SSRF-safe client: resolved addresses checked at
// connect time, redirects re-checked), passing `allowPrivate` and `timeoutMs`.
// Until then the resolved addresses are checked before connecting, which a
// DNS answer that changes between the check and the connection could evade.
export const sendWebhook: SendWebhook = async (url, headers, body, options) => {
  const target = new URL(url);
  if (!options.allowPrivate) {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    if (addresses.length === 0 || addresses.some(isPrivateAddress)) throw new PrivateAddressError(`${target.hostname} resolves to a private address`);
  }
  const res = await fetch(target, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'workspace-api-webhooks/1' },
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  await res.body?.cancel().catch(() => undefined);
  return { statusCode: res.status };
};
