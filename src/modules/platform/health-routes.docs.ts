// What the OpenAPI document says of the routes in health-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  getHealth: {
    summary: 'Liveness and database reachability, for load balancers',
    description:
      'Answers 200 while the server runs and its database answers a ping; 503 `not_ready` otherwise. No credentials.',
  },
});

export const examples = {
  getHealth: { status: 'ok' as const, database: 'sqlite' },
};
