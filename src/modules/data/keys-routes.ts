// Store keys (spec 4.7).
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { KeyService } from './keys-service.js';
import { CreateKeyBody, KeyResponse } from './schemas.js';
import { docs, examples } from './keys-routes.docs.js';

export function keyRoutes(app: App, keys: KeyService) {
  app.put(
    '/api/keys',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.createKey,
        body: Type.Object(CreateKeyBody.properties, { examples: [examples.createKeyBody] }),
        response: {
          200: ok(
            Type.Object({ id: Type.String({ description: 'The new key id' }) }),
            'The new key',
            examples.createKey,
          ),
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
        ...docs.getKey,
        params: IdParams,
        response: { 200: ok(KeyResponse, 'The key', examples.getKey), ...errorResponses('not_found') },
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
        ...docs.deleteKey,
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
