// Browser-facing protections on every answer: CORS for the origins the
// operator lists (CORS_ORIGINS) and security headers, with a content security
// policy under which the docs UI at /api/docs runs offline. The headers are
// fixed strings built at start (helmet rebuilt its policy on every answer:
// a fifth of a read's CPU; docs/decisions/benchmarks.md).
import cors from '@fastify/cors';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { Config } from '../config.js';

/** Matches an Origin header against CORS_ORIGINS entries: exact origins, or `scheme://host:*` for any port of that host. */
export function corsOriginMatcher(allowed: string[]): (origin: string) => boolean {
  const exact = new Set(allowed.filter((o) => !o.endsWith(':*')));
  const anyPort = allowed.filter((o) => o.endsWith(':*')).map((o) => o.slice(0, -2));
  return (origin) => {
    if (exact.has(origin)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    return url.origin === origin && anyPort.includes(`${url.protocol}//${url.hostname}`);
  };
}

/**
 * Same-origin scripts only (the docs UI loads its bundle from /api/docs/static),
 * inline styles (the UI sets style attributes), no outside resources, and no
 * framing: the policy of the HTML pages (docs, sandbox pages).
 */
export const contentSecurityPolicy = {
  defaultSrc: ["'self'"],
  baseUri: ["'self'"],
  scriptSrc: ["'self'"],
  scriptSrcAttr: ["'none'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * The policy of every other answer (JSON, the event stream, errors, 404s): a
 * document that loads nothing and may not be framed. A browser that is tricked
 * into rendering an API answer as a page runs nothing from it.
 */
export const apiContentSecurityPolicy = { defaultSrc: ["'none'"], frameAncestors: ["'none'"] };

/** `{ scriptSrc: ["'self'"] }` → `script-src 'self'`, directives joined by `; ` (the header's syntax, as helmet wrote it). */
export function serializePolicy(directives: Record<string, readonly string[]>): string {
  return Object.entries(directives)
    .map(([name, values]) => [name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), ...values].join(' '))
    .join(';');
}

export interface SecurityHeaderSets {
  /** Every answer that is not an HTML page: the headers that matter for JSON. */
  api: Readonly<Record<string, string>>;
  /** HTML pages: the full set helmet's defaults wrote, with the page policy. */
  html: Readonly<Record<string, string>>;
}

/**
 * Computed once at start; each answer gets one of the two objects as it is
 * (no per-request parsing or string building). The HTML set is what helmet 8
 * wrote with our options (test/http/security.test.ts compares them); the API
 * set keeps what a browser applies to a JSON answer — nosniff, the API policy,
 * no framing, no referrer, cross-origin isolation of the answer, HSTS — and
 * leaves out what only acts on documents (DNS prefetching of links,
 * Origin-Agent-Cluster, IE8's download prompt, the retired XSS auditor).
 */
export function securityHeaderSets(publicUrl: string): SecurityHeaderSets {
  const https = publicUrl.startsWith('https:');
  const common: Record<string, string> = {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'referrer-policy': 'no-referrer',
    // HSTS only means something over HTTPS; on plain-HTTP development servers it would be ignored anyway.
    ...(https ? { 'strict-transport-security': `max-age=${180 * 24 * 3600}` } : {}),
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'SAMEORIGIN',
    'x-permitted-cross-domain-policies': 'none',
  };
  const pagePolicy = serializePolicy({ ...contentSecurityPolicy, ...(https ? { upgradeInsecureRequests: [] } : {}) });
  return {
    api: Object.freeze({ 'content-security-policy': serializePolicy(apiContentSecurityPolicy), ...common }),
    html: Object.freeze({
      'content-security-policy': pagePolicy,
      ...common,
      'origin-agent-cluster': '?1',
      'x-dns-prefetch-control': 'off',
      'x-download-options': 'noopen',
      'x-xss-protection': '0',
    }),
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers HTML pages: it gets the page headers (full policy) instead of the API set. */
    html?: boolean;
  }
}

/** A route answers HTML when it says so (`config.html`), is the docs UI, or documents a text/html answer. */
function answersHtml(route: { url: string; config?: { html?: boolean }; schema?: { response?: unknown } }): boolean {
  if (route.config?.html) return true;
  if (route.url === '/api/docs' || route.url.startsWith('/api/docs/')) return true;
  const responses = (route.schema?.response ?? {}) as Record<string, { content?: Record<string, unknown> } | undefined>;
  return Object.values(responses).some((r) => r?.content !== undefined && 'text/html' in r.content);
}

/**
 * One onRequest hook for every answer writes the request id and the API
 * headers; routes that answer HTML get a second, route-level hook that writes
 * the page set over them. A handler may still replace its policy
 * (reply.header('content-security-policy', …)), as the sandbox checkout does.
 * Must run before any route is registered.
 */
export function installSecurityHeaders(app: FastifyInstance, config: Config): void {
  const sets = securityHeaderSets(config.publicUrl);
  const { api, html } = sets;
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(api);
    reply.header('x-request-id', request.id);
    done();
  });
  const pageHeaders: onRequestHookHandler = (_request, reply, done) => {
    reply.headers(html);
    done();
  };
  app.addHook('onRoute', (route) => {
    if (!answersHtml(route)) return;
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [pageHeaders, ...existing];
  });
}

export async function registerBrowserSecurity(app: FastifyInstance, config: Config): Promise<void> {
  const allowOrigin = corsOriginMatcher(config.corsOrigins);
  await app.register(cors, {
    // Listed origins get their origin reflected and credentials (the session cookie); others get no CORS headers.
    origin: (origin, callback) => callback(null, origin !== undefined && allowOrigin(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
    // Headers browser apps must read: ids, retry hints, replay marks and connect's counts.
    exposedHeaders: ['x-request-id', 'retry-after', 'content-disposition', 'x-session-id', 'idempotent-replayed', 'x-objects-written', 'x-frames-skipped', 'x-credits-granted'],
    maxAge: 600,
  });
}
