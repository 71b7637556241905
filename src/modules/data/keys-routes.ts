// Store keys (spec 4.7).
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import { exampleIds, exampleKey } from './examples.js';
import type { App } from '../../http/types.js';
import type { KeyService } from './keys-service.js';
import { CreateKeyBody, KeyResponse } from './schemas.js';

export function keyRoutes(app: App, keys: KeyService) {
  app.put(
    '/api/keys',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        operationId: 'createKey',
        summary:
          'Create a store key bound to a server: random, or bring your own (base64 key of 32 bytes and iv of 12)',
        description:
          "The server is one of your registered servers or the service's current server (GET /api/server). 400 `invalid_input` for an unknown server or a key or iv of the wrong length.",
        body: Type.Object(CreateKeyBody.properties, { examples: [{ server: 'backend-1' }] }),
        response: {
          200: ok(Type.Object({ id: Type.String({ description: 'The new key id' }) }), 'The new key', {
            id: exampleIds.KEY_ID,
          }),
        },
      },
    },
    async (request) => keys.create(request.auth!.userId, request.body),
  );

  app.get(
    '/api/keys/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        operationId: 'getKey',
        summary: 'A store key, hex-encoded',
        description: "Only your own keys; another user's key answers 404 like a missing one.",
        params: IdParams,
        response: { 200: ok(KeyResponse, 'The key', exampleKey), ...errorResponses('not_found') },
      },
    },
    async (request) => keys.get(request.auth!.userId, request.params.id),
  );

  app.delete(
    '/api/keys/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        operationId: 'deleteKey',
        summary: "Delete a store key's metadata; objects encrypted with it stay",
        description: "409 for a store's default key.",
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses('not_found', 'conflict') },
      },
    },
    async (request, reply) => {
      await keys.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
