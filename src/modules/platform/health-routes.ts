import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { DatabaseHandle } from '../../db/database.js';
import { docs, examples } from './health-routes.docs.js';

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
        ...docs.getHealth,
        response: {
          200: ok(
            Type.Object({ status: Type.Literal('ok'), database: Type.String({ description: 'sqlite or postgres' }) }),
            'Serving',
            examples.getHealth,
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
