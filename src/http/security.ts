// Browser-facing protections on every answer: CORS for the origins the
// operator lists (CORS_ORIGINS) and security headers, with a content security
// policy under which the docs UI at /api/docs runs offline. The headers are
// fixed strings built at start, written by one hook (helmet rebuilt its policy
// on every answer, a fifth of a read's CPU, and @fastify/cors resolved its
// options on every request, with or without Origin; bench/ANALYSIS.md).
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
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

/** Response headers a cross-origin browser app may read (Access-Control-Expose-Headers). */
export const exposedResponseHeaders = [
  'x-request-id',
  'etag',
  'retry-after',
  'content-disposition',
  'x-session-id',
  'idempotent-replayed',
  'x-next-after',
  'link',
  'x-objects-written',
  'x-frames-skipped',
  'x-credits-granted',
] as const;

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

/** What CORS answers listed origins (what @fastify/cors was configured with before issue 26). */
const CORS = {
  methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'].join(', '),
  // Headers browser apps must read: ids, retry hints, replay marks and connect's counts.
  // Headers browser apps must read: ids, versions (ETag, for If-Match), paging, retry hints, replay marks and
  // connect's counts. Every response header the OpenAPI document declares is here (test/http/security.test.ts).
  exposedHeaders: exposedResponseHeaders.join(', '),
  maxAge: '600',
};

/** Adds a field to Vary unless it is there (or Vary is `*`). */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined || current === '') return void reply.header('vary', field);
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const fields = text
    .toLowerCase()
    .split(',')
    .map((f) => f.trim());
  if (fields.includes('*') || fields.includes(field.toLowerCase())) return;
  reply.header('vary', `${text}, ${field}`);
}

/**
 * CORS for a request that sends Origin, as @fastify/cors did with our options:
 * a listed origin is reflected with credentials and the exposed headers, and
 * its preflight is answered here (204; 400 without Access-Control-Request-Method);
 * any other origin gets no CORS headers, and its preflight falls through to
 * the not-found handler's 403. True when the answer was sent.
 */
function corsForOrigin(
  request: FastifyRequest,
  reply: FastifyReply,
  origin: string,
  allowOrigin: (origin: string) => boolean,
): boolean {
  if (!allowOrigin(origin)) return false;
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-allow-credentials', 'true');
  reply.header('access-control-expose-headers', CORS.exposedHeaders);
  if (request.raw.method !== 'OPTIONS') return false;
  if (!request.headers['access-control-request-method']) {
    reply.code(400).type('text/plain').send('Invalid Preflight Request');
    return true;
  }
  reply.header('access-control-allow-methods', CORS.methods);
  addVary(reply, 'Access-Control-Request-Headers');
  const requested = request.headers['access-control-request-headers'];
  if (requested !== undefined) reply.header('access-control-allow-headers', requested);
  reply.header('access-control-max-age', CORS.maxAge);
  // Safari waits for a body on a 204 without Content-Length.
  reply.code(204).header('content-length', '0').send();
  return true;
}

/**
 * One onRequest hook for every answer writes the request id, the API headers
 * (with `Vary: Origin`: an answer differs by Origin) and, only for a request
 * that sends Origin, CORS. Routes that answer HTML get a second, route-level
 * hook that writes the page set over them. A handler may still replace its
 * policy (reply.header('content-security-policy', …)), as the sandbox checkout
 * does. Must run before any route is registered.
 */
export function installBrowserSecurity(app: FastifyInstance, config: Config): void {
  const sets = securityHeaderSets(config.publicUrl);
  const api = { ...sets.api, vary: 'Origin' };
  const html = { ...sets.html, vary: 'Origin' };
  const allowOrigin = corsOriginMatcher(config.corsOrigins);
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(api);
    reply.header('x-request-id', request.id);
    const origin = request.headers.origin;
    if (origin !== undefined && corsForOrigin(request, reply, origin, allowOrigin)) return;
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
  // Preflights of listed origins are answered by the hook; any other OPTIONS reaches the not-found handler
  // (403 for a preflight of an unlisted origin, 404 otherwise), as with @fastify/cors's hidden catch-all route.
  app.options('*', { schema: { hide: true } }, (_request, reply) => reply.callNotFound());
}
