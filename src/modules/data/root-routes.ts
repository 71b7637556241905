// Root, current server and registered servers (spec 4.7).
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CurrentServer, RegisterServerBody, RegisteredServer, RootResponse, ServerEntry } from './schemas.js';

export function rootRoutes(app: App, services: Services) {
  const { root, servers } = services.data;

  app.get(
    '/api/root',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: 'The root object: the eight stores with their default keys and the current server; created on first call',
        response: { 200: RootResponse, ...errors(401, 403) },
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
        summary: "The service's current server name and public key (SPKI and JWK)",
        response: { 200: CurrentServer, ...errors(401, 403) },
      },
    },
    async () => servers.currentServer(),
  );

  app.get(
    '/api/servers',
    {
      config: { auth: 'verified' },
      schema: { tags: ['data'], summary: 'Your registered servers', response: { 200: Type.Array(ServerEntry), ...errors(401, 403) } },
    },
    async (request) => servers.list(request.auth!.userId),
  );

  app.post(
    '/api/servers',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: 'Register a server: generate a P-256 key pair (private key returned once) or upload a P-256 public key',
        description: '400 for invalid input (bad name, missing or non-P-256 publicKey); 409 conflict when you already have a server of that name.',
        body: RegisterServerBody,
        response: { 200: RegisteredServer, ...errors(400, 401, 403, 409) },
      },
    },
    async (request) => servers.register(request.auth!.userId, request.body),
  );
}
