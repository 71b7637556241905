// Root, current server and registered servers (spec 4.7).
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { RootService } from './root-service.js';
import type { ServerService } from './server-service.js';
import { CurrentServer, RegisterServerBody, RegisteredServer, RootResponse, ServerEntry } from './schemas.js';
import { docs, examples } from './root-routes.docs.js';

export function rootRoutes(app: App, root: RootService, servers: ServerService) {
  app.get(
    '/api/root',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.getRoot,
        response: { 200: ok(RootResponse, 'The root and its stores', examples.getRoot) },
      },
    },
    async (request) => root.getRoot(request.auth!.userId),
  );

  app.get(
    '/api/server',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.getCurrentServer,
        response: { 200: ok(CurrentServer, 'The current server', examples.getCurrentServer) },
      },
    },
    async () => servers.currentServer(),
  );

  app.get(
    '/api/servers',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.listServers,
        response: {
          200: ok(Type.Array(ServerEntry), 'Your servers', examples.listServers),
        },
      },
    },
    async (request) => servers.list(request.auth!.userId),
  );

  app.post(
    '/api/servers',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.registerServer,
        body: Type.Object(RegisterServerBody.properties, { examples: [examples.registerServerBody] }),
        response: {
          200: ok(
            RegisteredServer,
            'The registered server (with its private key in mode generate)',
            examples.registerServer,
          ),
          ...errorResponses('conflict'),
        },
      },
    },
    async (request) => servers.register(request.auth!.userId, request.body),
  );
}
