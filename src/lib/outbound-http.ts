// The service's one client for outbound HTTP (crawler, connectors,
// integrations, voice, embeddings, webhooks). SSRF-safe by construction:
// every address a connection goes to is checked at connect time (after DNS,
// so names that resolve to private addresses and odd spellings such as 127.1
// or [::ffff:127.0.0.1] are refused alike), redirects are followed here and
// each hop is checked again, and every response has a deadline and a size cap.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, RequestInit as UndiciRequestInit } from 'undici';

// undici is imported on a client's first outbound request, not at start: its
// ~100 files were about 150 ms of the server's start-up, and many servers
// never call out. (Node caches the import for every later client.)

/** Why an outbound request did not produce a response. */
export type OutboundErrorReason =
  | 'blocked_address'
  | 'invalid_url'
  | 'too_many_redirects'
  | 'timeout'
  | 'too_large'
  | 'network';

export class OutboundHttpError extends Error {
  constructor(
    readonly reason: OutboundErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundHttpError';
  }
}

export interface OutboundHttpOptions {
  /** Allow loopback, private, link-local and other non-public addresses (operator-configured endpoints, tests). */
  allowPrivate?: boolean;
  /** Replaces the address policy (an operator's allow-list); by default only public addresses unless allowPrivate. */
  allowAddress?: (address: string) => boolean;
  /** Origins (`scheme://host:port`) reached whatever their address, such as the server's own PUBLIC_URL; every other origin keeps the address policy, redirects included. */
  allowOrigins?: string[];
  /** Deadline for the whole exchange, redirects and body included (and for connecting, for the headers, and between pieces of the body). */
  timeoutMs?: number;
  /**
   * Replaces timeoutMs as the deadline for the whole exchange; null: none, for
   * long streams, whose silence is still bounded by timeoutMs (connect,
   * headers, between pieces of the body) and whose end is the caller's signal.
   */
  deadlineMs?: number | null;
  /** Largest response body; reading past it fails with reason `too_large`. */
  maxBytes?: number;
  /** Redirects followed (each re-checked); 0 returns the 3xx response itself. */
  maxRedirects?: number;
  /** Sent when the caller sets none. */
  userAgent?: string;
  /** Resolver, replaceable in tests; defaults to the system resolver. */
  lookup?: typeof dnsLookup;
}

export type OutboundInit = Omit<UndiciRequestInit, 'dispatcher' | 'redirect'>;

/** A fetch-like function; the Response's `url` is the address that answered after redirects. */
export interface OutboundHttp {
  (url: string | URL, init?: OutboundInit): Promise<Response>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}

/**
 * The range of an address as ipaddr.js names them ('unicast' for public
 * unicast, 'loopback', 'private', …), null when it is not an address.
 * IPv4-mapped IPv6 (::ffff:a.b.c.d, in any spelling such as ::ffff:7f00:1) is
 * judged as the IPv4 address it carries. So is the deprecated IPv4-compatible
 * form (::a.b.c.d, ::7f00:1, 0:0:0:0:0:0:127.0.0.1: the first 96 bits zero,
 * RFC 4291 2.5.5.1), which ipaddr.js calls unicast in most spellings: the ones
 * carrying 127/8 are 'loopback'; the rest are 'ipv4Compatible', never public.
 */
export function addressRange(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // Zone ids (fe80::1%eth0) are link-local by definition.
  if (bare.includes('%')) return 'linkLocal';
  if (!ipaddr.isValid(bare)) return null;
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(hexTail(bare));
  } catch {
    return null;
  }
  if (parsed.kind() === 'ipv4') return parsed.range();
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range();
  const parts = v6.parts;
  const firstBitsZero = parts.slice(0, 6).every((p) => p === 0);
  // ::/127 (:: and ::1) keep their own names: unspecified, loopback.
  if (firstBitsZero && !(parts[6] === 0 && parts[7] <= 1)) {
    const embedded = ipaddr.fromByteArray([parts[6] >> 8, parts[6] & 0xff, parts[7] >> 8, parts[7] & 0xff]);
    const range = embedded.range();
    return range === 'unicast' ? 'ipv4Compatible' : range;
  }
  return v6.range();
}

/**
 * An IPv6 address with a dotted IPv4 tail (::127.0.0.1) rewritten with hex
 * groups (::7f00:1). ipaddr.js reads `::a.b.c.d` as if it were `::ffff:a.b.c.d`;
 * the socket does not, so the check must see what the socket sees.
 */
function hexTail(address: string): string {
  const match = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!match) return address;
  const [a, b, c, d] = match.slice(2).map(Number);
  if ([a, b, c, d].some((n) => n > 255)) return address;
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * Whether an address may be contacted without `allowPrivate`: only public
 * unicast (see addressRange). NAT64, 6to4 and Teredo, which embed IPv4
 * addresses, are refused, and so is every IPv4-compatible address.
 */
export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast';
}

/** The origin a connection is for, spelled as URL.origin spells it (default ports dropped). */
function originOf(opts: { protocol: string; hostname: string; port: string | number }): string {
  try {
    return new URL(`${opts.protocol}//${opts.hostname}${opts.port ? `:${opts.port}` : ''}`).origin;
  } catch {
    return '';
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

export function createOutboundHttp(options: OutboundHttpOptions = {}): OutboundHttp {
  const allowed = options.allowAddress ?? (options.allowPrivate ? () => true : isPublicAddress);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const deadlineMs = options.deadlineMs === undefined ? timeoutMs : options.deadlineMs;
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const resolve = options.lookup ?? dnsLookup;

  const blocked = (host: string, address: string) =>
    new OutboundHttpError(
      'blocked_address',
      host === address
        ? `${address} is not a public address`
        : `${host} resolves to ${address}, which is not a public address`,
    );

  // Resolves like dns.lookup, but fails when any address of the name is not public,
  // so the socket can only ever connect to an address that was checked.
  const checkedLookup = (
    hostname: string,
    opts: LookupOptions,
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => !allowed(a.address));
      if (bad) return callback(blocked(hostname, bad.address), []);
      if (opts.all) return callback(null, list);
      if (list.length === 0)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, list[0].address, list[0].family);
    });
  };

  const allowedOrigins = new Set((options.allowOrigins ?? []).map((origin) => new URL(origin).origin));
  // undici's fetch and this client's agent, made on the first request.
  const createClient = async (): Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> => {
    const { Agent, buildConnector, fetch } = await import('undici');
    const connector = buildConnector({ lookup: checkedLookup as never, timeout: timeoutMs });
    const unchecked = allowedOrigins.size > 0 ? buildConnector({ timeout: timeoutMs }) : null;
    const agent = new Agent({
      connect: (opts, callback) => {
        if (unchecked && allowedOrigins.has(originOf(opts))) return unchecked(opts, callback);
        // Literal addresses never reach the resolver: check them here.
        const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
        if (isIP(host) && !allowed(host)) return callback(blocked(host, host), null);
        return connector(opts, callback);
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return { agent, fetch };
  };
  let client: ReturnType<typeof createClient> | null = null;

  const outbound = async (input: string | URL, init: OutboundInit = {}): Promise<Response> => {
    // Without a deadline this signal never fires (it only keeps the code below uniform).
    const timeout = deadlineMs === null ? new AbortController().signal : AbortSignal.timeout(deadlineMs);
    const signal = init.signal ? AbortSignal.any([init.signal as AbortSignal, timeout]) : timeout;
    let url = parseHttpUrl(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers as HeadersInit | undefined);
    if (!headers.has('user-agent')) headers.set('user-agent', options.userAgent ?? 'workspace-api');

    const { agent: dispatcher, fetch: undiciFetch } = await (client ??= createClient());
    for (let hop = 0; ; hop += 1) {
      let response: Response;
      try {
        response = (await undiciFetch(url, {
          ...init,
          method,
          body,
          headers: Object.fromEntries(headers),
          signal,
          dispatcher,
          redirect: 'manual',
        })) as unknown as Response;
      } catch (error) {
        throw wrapFailure(error, timeout);
      }
      const location = response.headers.get('location');
      if (REDIRECTS.has(response.status) && location && maxRedirects > 0) {
        await response.body?.cancel().catch(() => {});
        if (hop >= maxRedirects)
          throw new OutboundHttpError('too_many_redirects', `more than ${maxRedirects} redirects`);
        const next = parseHttpUrl(new URL(location, url).href);
        // 303, and 301/302 after POST, continue as GET without a body (what browsers and fetch do).
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
          headers.delete('content-type');
          headers.delete('content-length');
        }
        // Credentials are for the origin they were given to.
        if (next.origin !== url.origin) {
          headers.delete('authorization');
          headers.delete('cookie');
        }
        url = next;
        continue;
      }
      return capResponse(response, url.href, maxBytes, timeout);
    }
  };
  // A client that never sent a request has no agent to close.
  return Object.assign(outbound, { close: async () => (client ? (await client).agent.close() : undefined) });
}

function parseHttpUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundHttpError('invalid_url', `not a valid URL: ${text.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundHttpError('invalid_url', `only http and https URLs are fetched (got ${url.protocol})`);
  if (url.username || url.password) throw new OutboundHttpError('invalid_url', 'URLs with credentials are not fetched');
  return url;
}

const UNDICI_TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** The first OutboundHttpError in an error's cause chain, or a network / timeout error. */
function wrapFailure(error: unknown, timeout: AbortSignal): OutboundHttpError {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof OutboundHttpError) return e;
  }
  if (timeout.aborted) return new OutboundHttpError('timeout', 'the request timed out', { cause: error });
  // undici's own connect, headers and body timers (the same timeoutMs) may fire before the deadline's signal does.
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (UNDICI_TIMEOUTS.has((e as { code?: string }).code ?? ''))
      return new OutboundHttpError('timeout', 'the request timed out', { cause: error });
  }
  if (error instanceof Error && error.name === 'AbortError')
    return new OutboundHttpError('network', 'the request was aborted', { cause: error });
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const detail = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new OutboundHttpError('network', `the request failed (${detail})`, { cause: error });
}

/** The response with a body that fails once more than maxBytes arrive (or at once when Content-Length says so). */
function capResponse(response: Response, finalUrl: string, maxBytes: number, timeout: AbortSignal): Response {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new OutboundHttpError('too_large', `the response is larger than ${maxBytes} bytes`);
  }
  let body: ReadableStream<Uint8Array> | null = null;
  if (response.body) {
    let received = 0;
    const reader = response.body.getReader();
    body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          controller.error(wrapFailure(error, timeout));
          return;
        }
        if (chunk.done) return controller.close();
        received += chunk.value.byteLength;
        if (received > maxBytes) {
          void reader.cancel().catch(() => {});
          controller.error(new OutboundHttpError('too_large', `the response is larger than ${maxBytes} bytes`));
          return;
        }
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }
  const capped = new Response(NULL_BODY.has(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(capped, 'url', { value: finalUrl });
  return capped;
}

/** Reads a capped response body; the size and timeout failures surface as OutboundHttpError. */
export async function readBody(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}

/**
 * The response with its whole (capped) body already read, so a size or
 * deadline failure surfaces here, where the caller maps request failures,
 * rather than later at `json()` or `arrayBuffer()`.
 */
export async function bufferResponse(response: Response): Promise<Response> {
  const body = NULL_BODY.has(response.status) ? null : await response.arrayBuffer();
  const buffered = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(buffered, 'url', { value: response.url });
  return buffered;
}

/**
 * The client for an endpoint the operator configured (a provider's API base,
 * the connector, callbacks to PUBLIC_URL). The operator chose the address, so
 * private ones are allowed (a local model or test server is normal there);
 * redirects are not followed (a 3xx is answered as it is), so a request never
 * leaves the configured origin, nor do credentials sent in custom headers.
 */
export function createOperatorHttp(
  options: Omit<OutboundHttpOptions, 'allowPrivate' | 'allowAddress' | 'maxRedirects'> = {},
): OutboundHttp {
  return createOutboundHttp({ ...options, allowPrivate: true, maxRedirects: 0 });
}
