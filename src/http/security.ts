// Browser-facing protections on every answer: CORS for the origins the
// operator lists (CORS_ORIGINS) and security headers (helmet), with a content
// security policy under which the docs UI at /api/docs runs offline.
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
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
 * framing. API answers are JSON, which a CSP does not affect.
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

export async function registerBrowserSecurity(app: FastifyInstance, config: Config): Promise<void> {
  const allowOrigin = corsOriginMatcher(config.corsOrigins);
  await app.register(cors, {
    // Listed origins get their origin reflected and credentials (the session cookie); others get no CORS headers.
    origin: (origin, callback) => callback(null, origin !== undefined && allowOrigin(origin)),
    credentials: true,
    methods: ['GET', 'HEAD', 'PUT', 'PATCH', 'POST', 'DELETE'],
    // Headers browser apps must read: ids, versions (ETag, for If-Match), paging, retry hints, replay marks and
    // connect's counts. Every response header the OpenAPI document declares is here (test/http/security.test.ts).
    exposedHeaders: [...exposedResponseHeaders],
    maxAge: 600,
  });
  const https = config.publicUrl.startsWith('https:');
  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { ...contentSecurityPolicy, ...(https ? { upgradeInsecureRequests: [] } : {}) } },
    // HSTS only means something over HTTPS; on plain-HTTP development servers it would be ignored anyway.
    strictTransportSecurity: https ? { maxAge: 180 * 24 * 3600, includeSubDomains: false } : false,
  });
}
