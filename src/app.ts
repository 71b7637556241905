// buildApp wires configuration, storage and services into a Fastify instance
// without listening, so tests drive it with inject() or a real socket.
import cookie from '@fastify/cookie';
import { installBodyLimits } from './http/body-limits.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { installAuth } from './http/auth.js';
import { installIdempotency } from './http/idempotency.js';
import { frameworkErrorOptions, installErrorHandler } from './http/error-handler.js';
import { installInputGuard } from './http/input-guard.js';
import { installJsonBodyParser } from './http/json-body.js';
import { registerOpenApi } from './http/openapi.js';
import { installBrowserSecurity } from './http/security.js';
import { ErrorResponse } from './http/schemas.js';
import type { App } from './http/types.js';
import { createValidatorCompiler } from './http/validation.js';
import { type Clock, systemClock } from './lib/clock.js';
import { randomUUID } from 'node:crypto';
import { agentTestRoutes } from './modules/agent-tests/routes.js';
import { apiKeyRoutes } from './modules/api-keys/routes.js';
import { billingRoutes } from './modules/billing/routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { dataRoutes } from './modules/data/routes.js';
import { personaRoutes } from './modules/personas/routes.js';
import { integrationRoutes } from './modules/integrations/routes.js';
import type { BillingAccount } from './modules/billing/account.js';
import { connectRoutes } from './modules/connect/routes.js';
import { eventRoutes } from './modules/events/routes.js';
import { healthRoutes } from './modules/platform/health-routes.js';
import { sandboxRoutes } from './modules/platform/sandbox-routes.js';
import { knowledgeRoutes } from './modules/knowledge/routes.js';
import { pathwayRoutes } from './modules/pathways/routes.js';
import type { Providers } from './providers/index.js';
import { telephonyRoutes } from './modules/telephony/routes.js';
import type { Secrets } from './secrets.js';
import { type Services, createServices } from './services.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { lazySerializerBuilder } from './http/lazy-compilers.js';
import { temporarySessionRoutes } from './modules/temporary-sessions/routes.js';
import { analysisRoutes } from './modules/analysis/routes.js';
import { callRoutes } from './modules/calls/routes.js';
import { callListRoutes } from './modules/calls/list-routes.js';
import { campaignRoutes } from './modules/campaigns/routes.js';
import { voiceRoutes } from './modules/voice-agent/routes.js';
import { consoleRoutes } from './modules/console/routes.js';
import { sandboxCallRoutes } from './modules/voice-agent/sandbox-routes.js';
import { webCallRoutes } from './modules/voice-agent/web-routes.js';
import websocket from '@fastify/websocket';
import { MEDIA_MAX_PAYLOAD_BYTES, mediaSocketErrorHandler } from './modules/voice-agent/media-admission.js';
import { installRequestObservation, registerMetricsEndpoint, watchDatabaseErrors } from './http/metrics.js';
import { Metrics } from './modules/platform/metrics.js';

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  secrets: Secrets;
  clock?: Clock;
  providers?: Partial<Providers>;
  /** Replaces the billing account (tests). */
  billing?: BillingAccount;
  logger?: FastifyServerOptions['logger'];
}

type RouteModule = (app: App, services: Services) => void | Promise<void>;

/**
 * Every area's routes, in the order they appear in the OpenAPI document. Each
 * route module receives only what it touches (its `…RouteDeps`), picked here
 * from the composition root; none of them sees `Services`.
 */
const routeModules: RouteModule[] = [
  (app, s) => healthRoutes(app, { database: s.database }),
  (app, s) =>
    sandboxRoutes(app, {
      providers: s.providers,
      outbox: s.platform.outbox,
      production: s.config.env === 'production',
    }),
  (app, s) =>
    authRoutes(app, {
      auth: s.auth.auth,
      accountMail: s.auth.accountMail,
      authenticator: s.auth.authenticator,
      phoneVerification: s.auth.phoneVerification,
      passwordReset: s.auth.passwordReset,
      twoFactor: s.auth.twoFactor,
      externalSignIn: s.auth.externalSignIn,
      cookies: { publicUrl: s.config.publicUrl },
    }),
  (app, s) => apiKeyRoutes(app, s.apiKeys),
  (app, s) =>
    dataRoutes(app, {
      ...s.data,
      limits: { bodyLimitBytes: s.config.bodyLimitBytes, objectContentLimitBytes: s.config.objectContentLimitBytes },
    }),
  (app, s) =>
    eventRoutes(app, {
      eventStreams: s.events.eventStreams,
      eventTickets: s.events.eventTickets,
      authenticator: s.auth.authenticator,
    }),
  (app, s) => billingRoutes(app, { ...s.billing, production: s.config.env === 'production' }),
  (app, s) => personaRoutes(app, s.personas),
  (app, s) => integrationRoutes(app, s.integrations),
  (app, s) => telephonyRoutes(app, s.telephony),
  (app, s) => knowledgeRoutes(app, s.knowledge),
  (app, s) => pathwayRoutes(app, s.pathways),
  (app, s) => connectRoutes(app, s.connect),
  (app, s) => webhookRoutes(app, s.webhooks),
  (app, s) =>
    callRoutes(app, { calls: s.calls.calls, sessions: s.calls.callSessions.sessions, audio: s.providers.audio }),
  (app, s) =>
    voiceRoutes(app, {
      callbacks: s.voice.callbacks,
      inbound: s.voice.inboundCalls,
      legs: s.calls.transfers,
      mediaSockets: s.voice.mediaSockets,
    }),
  (app, s) => callListRoutes(app, { views: s.calls.views }),
  (app, s) => sandboxCallRoutes(app, s.voice.sandboxInbound),
  (app, s) => webCallRoutes(app, { webCalls: s.voice.webCalls, mediaSockets: s.voice.mediaSockets }),
  (app, s) => campaignRoutes(app, { campaigns: s.campaigns.campaigns, doNotCall: s.campaigns.doNotCall }),
  (app, s) => temporarySessionRoutes(app, s.temporarySessions),
  (app, s) => analysisRoutes(app, s.analysis),
  (app, s) => agentTestRoutes(app, s.agentTests),
  (app, s) => consoleRoutes(app, { publicUrl: s.config.publicUrl }),
];

/** An incoming X-Request-Id worth keeping: 1–128 visible characters from a safe set (no spaces, quotes or control characters). */
export function acceptedRequestId(header: string | string[] | undefined): string | null {
  return typeof header === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(header) ? header : null;
}

export async function buildApp(deps: AppDeps): Promise<App & { services: Services; metrics: Metrics }> {
  const { config } = deps;
  const metrics = new Metrics();
  const services = createServices({ ...deps, clock: deps.clock ?? systemClock, metrics });
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: config.bodyLimitBytes,
    // Path parameters up to 200 characters (publish relatedId, ids); the router's default is 100 (then 414).
    routerOptions: { maxParamLength: 256 },
    trustProxy: config.trustProxy,
    // One line per request, written in onResponse (src/http/metrics.ts), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A caller's X-Request-Id (e.g. from a proxy) is kept when well-formed, so logs line up across hops.
    // A new id is a random UUID: unique, and cheaper than the time-ordered ids rows need (newId).
    genReqId: (request) => acceptedRequestId(request.headers['x-request-id']) ?? randomUUID(),
    requestIdHeader: false,
    schemaController: { compilersFactory: { buildSerializer: lazySerializerBuilder() } },
    ...frameworkErrorOptions,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('services', services);
  app.decorate('metrics', metrics);
  installRequestObservation(app, metrics);
  watchDatabaseErrors(app, deps.database, metrics);
  const pool = deps.database.pgPool;
  metrics.watch({
    pool: pool ? () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }) : null,
    sseStreams: () => services.events.eventStreams.openCount,
    callsInProgress: () => services.voice.live.size,
    webhookQueueDepth: () => services.webhooks.webhookStore.pendingCount(),
    mediaSocketsWaiting: () => services.voice.admission.waiting,
  });
  registerMetricsEndpoint(app, config, metrics);
  // The request id, the security headers and CORS, in one hook (src/http/security.ts).
  installBrowserSecurity(app, config);
  installJsonBodyParser(app);

  app.setValidatorCompiler(createValidatorCompiler(() => app.getSchemas()));
  installErrorHandler(app, { onDatabaseUnavailable: () => metrics.dbErrors.inc() });
  installInputGuard(app);
  await app.register(cookie);
  await registerOpenApi(app);
  app.addSchema(ErrorResponse);
  // Before the WebSocket plugin's own preClose closes every socket: calls end `instance_stopped` and are recorded while the database is open.
  // The dialer first, so that no campaign call starts while calls are being stopped.
  app.addHook('preClose', async () => {
    await services.campaigns.dialer.stop();
    await services.voice.stopCalls();
  });
  // Media streams (Twilio Media Streams, browser calls), the only WebSocket routes: a message over 64 KB is refused (1009).
  await app.register(websocket, {
    options: { maxPayload: MEDIA_MAX_PAYLOAD_BYTES },
    errorHandler: mediaSocketErrorHandler,
  });
  installAuth(app, services.auth.authenticator, services.events.eventTickets);
  installBodyLimits(app, config);
  installIdempotency(app, services.platform.idempotency);

  for (const register of routeModules) await register(app, services);
  app.addHook('onClose', () => services.knowledge.close());
  app.addHook('onClose', () => services.analysis.close());
  app.addHook('onClose', () => services.voice.close());
  app.addHook('onClose', async () => services.voice.webCalls.close());
  app.addHook('onClose', () => services.customTools.stop());
  // Jobs start once every kind is defined; a job under way when the app closes runs again elsewhere when its lease ends.
  app.addHook('onReady', async () => services.platform.jobs.start());
  app.addHook('onClose', () => services.platform.jobs.stop());
  return app as unknown as App & { services: Services; metrics: Metrics };
}
