// buildApp wires configuration, storage and services into a Fastify instance
// without listening, so tests drive it with inject() or a real socket.
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import type { DatabaseHandle } from './db/database.js';
import { installAuth } from './http/auth.js';
import { installErrorHandler } from './http/error-handler.js';
import { installIdempotency } from './http/idempotency.js';
import { registerOpenApi } from './http/openapi.js';
import { ErrorResponse } from './http/schemas.js';
import type { App } from './http/types.js';
import { createValidatorCompiler } from './http/validation.js';
import { type Clock, systemClock } from './lib/clock.js';
import { newId } from './lib/ids.js';
import { apiKeyRoutes } from './modules/api-keys/routes.js';
import { externalRoutes } from './modules/auth/external-routes.js';
import { authRoutes } from './modules/auth/routes.js';
import { dataRoutes } from './modules/data/routes.js';
import { eventRoutes } from './modules/events/routes.js';
import { resetRoutes } from './modules/auth/reset-routes.js';
import { verificationRoutes } from './modules/auth/verification-routes.js';
import { twoFactorRoutes } from './modules/auth/two-factor-routes.js';
import { healthRoutes } from './modules/platform/health-routes.js';
import { sandboxRoutes } from './modules/platform/sandbox-routes.js';
import type { Providers } from './providers/index.js';
import type { Secrets } from './secrets.js';
import { type Services, createServices } from './services.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { callRoutes } from './modules/calls/routes.js';

export interface AppDeps {
  config: Config;
  database: DatabaseHandle;
  secrets: Secrets;
  clock?: Clock;
  providers?: Partial<Providers>;
  logger?: FastifyServerOptions['logger'];
}

type RouteModule = (app: App, services: Services) => void | Promise<void>;

/** Every area's routes, in the order they appear in the OpenAPI document. */
const routeModules: RouteModule[] = [healthRoutes, sandboxRoutes, authRoutes, verificationRoutes, resetRoutes, twoFactorRoutes, externalRoutes, apiKeyRoutes, dataRoutes, eventRoutes, webhookRoutes, callRoutes];

export async function buildApp(deps: AppDeps): Promise<App & { services: Services }> {
  const { config } = deps;
  const services = createServices({ ...deps, clock: deps.clock ?? systemClock });
  const app = Fastify({
    logger: deps.logger ?? { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: config.bodyLimitBytes,
    // Path parameters up to 200 characters (publish relatedId, ids); the router's default is 100 (then 414).
    routerOptions: { maxParamLength: 256 },
    trustProxy: config.trustProxy,
    genReqId: () => newId(),
    requestIdHeader: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('services', services);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // An empty body sent with Content-Type: application/json reads as no body,
  // so routes without a body accept what curl -H 'content-type: …' sends.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = Object.assign(new Error('request body is not valid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' });
      done(err, undefined);
    }
  });

  app.setValidatorCompiler(createValidatorCompiler(() => app.getSchemas()));
  installErrorHandler(app);
  await app.register(cookie);
  await registerOpenApi(app);
  app.addSchema(ErrorResponse);
  installAuth(app, services.authenticator);
  installIdempotency(app, services.idempotency);

  for (const register of routeModules) await register(app, services);
  return app as unknown as App & { services: Services };
}
