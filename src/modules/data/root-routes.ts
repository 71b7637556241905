// Root, current server and registered servers (spec 4.7).
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import { exampleIds, exampleRoot, exampleServer } from './examples.js';
import type { App } from '../../http/types.js';
import type { RootService } from './root-service.js';
import type { ServerService } from './server-service.js';
import { CurrentServer, RegisterServerBody, RegisteredServer, RootResponse, ServerEntry } from './schemas.js';

export function rootRoutes(app: App, root: RootService, servers: ServerService) {
  app.get(
    '/api/root',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        operationId: 'getRoot',
        summary:
          'The root object: the eight stores with their default keys and the current server; created on first call',
        description:
          "The first call creates the root container, one container object per store and each store's default key; later calls answer the same ids.",
        response: { 200: ok(RootResponse, 'The root and its stores', exampleRoot) },
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
        operationId: 'getCurrentServer',
        summary: "The service's current server name and public key (SPKI and JWK)",
        description:
          'Encrypt store keys to this public key (ECDH-ES+A256KW) so the service can use them; the name changes when the service rotates its key.',
        response: { 200: ok(CurrentServer, 'The current server', exampleServer) },
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
        operationId: 'listServers',
        summary: 'Your registered servers',
        description: 'The servers you registered with POST /api/servers, oldest first; private keys are never stored.',
        response: {
          200: ok(Type.Array(ServerEntry), 'Your servers', [
            { name: 'backend-1', publicKey: exampleIds.SPKI, createdAt: exampleIds.AT },
          ]),
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
        operationId: 'registerServer',
        summary:
          'Register a server: generate a P-256 key pair (private key returned once) or upload a P-256 public key',
        description:
          '400 for invalid input (bad name, missing or non-P-256 publicKey); 409 conflict when you already have a server of that name.',
        body: Type.Object(RegisterServerBody.properties, { examples: [{ name: 'backend-1', mode: 'generate' }] }),
        response: {
          200: ok(RegisteredServer, 'The registered server (with its private key in mode generate)', {
            name: 'backend-1',
            publicKey: exampleIds.SPKI,
            privateKey: 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg',
            createdAt: exampleIds.AT,
          }),
          ...errorResponses('conflict'),
        },
      },
    },
    async (request) => servers.register(request.auth!.userId, request.body),
  );
}
