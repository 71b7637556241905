// The console (DESIGN.md "Calls from a browser and the console"): its pages
// served by the server itself, same origin as the API, so the session cookie
// signs the browser in and no CORS or token handling is needed. Sign in and
// call an agent at /console, the account's calls at /console/calls, one call
// at /console/calls/{id}, the account's pathways drawn as graphs at
// /console/pathways, charts of the account's calls at /console/analytics, and
// the account's agent tests with their last results at /console/tests, and the
// account's campaigns with their progress at /console/campaigns.
// Pages are static (pages.ts puts each together once at start, from one
// layout and its own content); their scripts call the API.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../http/errors.js';
import type { App } from '../../http/types.js';
import { type ConsoleAsset, loadConsoleAssets } from './assets.js';
import { composeConsolePages } from './pages.js';

/**
 * Stricter than the service-wide policy (src/http/security.ts): nothing by
 * default; scripts, styles and the audio worklet only from this origin (no
 * inline code at all); the API and the call's WebSocket on this origin (and
 * PUBLIC_URL's, which the WebSocket URL of a web call names); recordings from
 * this origin (the agent's voice plays through Web Audio, which media-src does
 * not govern); DOM sinks that take script need Trusted Types: the console
 * builds elements, never HTML strings, and creates one policy, for the one
 * script URL it starts as a worker (the pathway graph's layout). Workers are
 * this origin's only (worker-src falls back to script-src).
 */
export function consoleContentSecurityPolicy(publicUrl: string): string {
  const origin = new URL(publicUrl);
  const socketOrigin = `${origin.protocol === 'https:' ? 'wss:' : 'ws:'}//${origin.host}`;
  const directives: Array<[string, string]> = [
    ['default-src', "'none'"],
    ['script-src', "'self'"],
    ['script-src-attr', "'none'"],
    ['style-src', "'self'"],
    ['img-src', "'self' data:"],
    ['media-src', "'self'"],
    ['connect-src', `'self' ${origin.origin} ${socketOrigin}`],
    ['base-uri', "'none'"],
    ['form-action', "'self'"],
    ['frame-ancestors', "'none'"],
    ['object-src', "'none'"],
    ['require-trusted-types-for', "'script'"],
  ];
  if (origin.protocol === 'https:') directives.push(['upgrade-insecure-requests', '']);
  return directives.map(([name, value]) => (value ? `${name} ${value}` : name)).join('; ');
}

const ROUTE_PARAM = Type.String({ minLength: 1, maxLength: 100 });

/** What the console pages need: the server's public address (their content security policy names it). */
export interface ConsoleRouteDeps {
  publicUrl: string;
}

export function consoleRoutes(app: App, deps: ConsoleRouteDeps) {
  const assets = loadConsoleAssets();
  const pages = composeConsolePages(assets);
  const policy = consoleContentSecurityPolicy(deps.publicUrl);

  const send = (request: FastifyRequest, reply: FastifyReply, asset: ConsoleAsset) => {
    reply.header('content-security-policy', policy).header('cache-control', 'no-cache').header('etag', asset.etag);
    if (request.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.type(asset.type).send(asset.body);
  };

  // Not API routes: HTML for people, left out of the OpenAPI document like the docs UI.
  for (const [route, html] of pages) {
    // A page's route parameters (the call page's :id) are only checked for length: its script reads them.
    const names = [...route.matchAll(/:(\w+)/g)].map((match) => match[1]!);
    const params = names.length
      ? { params: Type.Object(Object.fromEntries(names.map((name) => [name, ROUTE_PARAM]))) }
      : {};
    app.get(route, { schema: { hide: true, ...params } }, (request, reply) => send(request, reply, html));
  }
  app.get('/console/', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console', 301));
  app.get(
    '/console/assets/:name',
    { schema: { hide: true, params: Type.Object({ name: ROUTE_PARAM }) } },
    (request, reply) => {
      const asset = assets.get((request.params as { name: string }).name);
      if (!asset || asset.type.startsWith('text/html')) throw notFound('console file');
      return send(request, reply, asset);
    },
  );
}
