// Small body limits where no credential is needed. Anyone can send those
// requests, so a login with a 15 MB body must cost us nothing: the route-level
// bodyLimit makes Fastify answer 413 from Content-Length (or stop reading a
// chunked body at the limit) before any parser or validator sees a byte.
// Provider webhooks are left alone: their routes add content-type parsers with
// their own limits (a route-level limit would override those).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

const WEBHOOKS = '/api/webhooks/';

/** Must run before any route is registered. */
export function installBodyLimits(app: FastifyInstance, config: Config): void {
  // Never more than the general limit.
  const limit = Math.min(config.bodyLimitBytes, config.unauthenticatedBodyLimitBytes);
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return;
    const path = route.url;
    const unauthenticated = !route.config?.auth && !path.startsWith(WEBHOOKS);
    // Every /api/auth/* body is a handful of short fields, signed in or not.
    if (unauthenticated || path.startsWith('/api/auth/')) route.bodyLimit = limit;
  });
}
