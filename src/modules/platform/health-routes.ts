import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';

export function healthRoutes(app: App, services: Services) {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['health'],
        summary: 'Liveness and database reachability, for load balancers',
        response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.String() }), ...errors(503) },
      },
    },
    async (_request, reply) => {
      try {
        await services.database.ping();
      } catch {
        return reply.status(503).send({ message: 'database unreachable', code: 'not_ready' });
      }
      return { status: 'ok' as const, database: services.database.dialect };
    },
  );
}
