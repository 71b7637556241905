import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { DatabaseHandle } from '../../db/database.js';

/** What the health routes touch: the database, to ping it and name its dialect. */
export interface HealthRouteDeps {
  database: Pick<DatabaseHandle, 'ping' | 'dialect'>;
}

export function healthRoutes(app: App, deps: HealthRouteDeps) {
  // The bare address: a browser is sent to the docs; a program gets where things are.
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if ((request.headers.accept ?? '').includes('text/html')) return reply.redirect('/api/docs', 302);
    return { docs: '/api/docs', openapi: '/api/openapi.json', health: '/api/health' };
  });
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['health'],
        operationId: 'getHealth',
        summary: 'Liveness and database reachability, for load balancers',
        description:
          'Answers 200 while the server runs and its database answers a ping; 503 `not_ready` otherwise. No credentials.',
        response: {
          200: ok(
            Type.Object({ status: Type.Literal('ok'), database: Type.String({ description: 'sqlite or postgres' }) }),
            'Serving',
            { status: 'ok', database: 'sqlite' },
          ),
          ...errorResponses('not_ready'),
        },
      },
    },
    async (_request, reply) => {
      try {
        await deps.database.ping();
      } catch {
        return reply.status(503).send({ message: 'database unreachable', code: 'not_ready' });
      }
      return { status: 'ok' as const, database: deps.database.dialect };
    },
  );
}
