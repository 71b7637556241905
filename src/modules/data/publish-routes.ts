// Publish associations (spec 4.8, 3.2).
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { PublicationResponse, PublishBody, PublishParams } from './schemas.js';

export function publishRoutes(app: App, services: Services) {
  const { publish } = services.data;

  app.put(
    '/api/objects/publish/:type/:relatedId',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: 'Publish one of your objects under a type and relatedId (replaces what was published there)',
        params: PublishParams,
        body: PublishBody,
        response: { 200: PublicationResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => publish.publish(request.auth!.userId, request.params.type, request.params.relatedId, request.body.objectId),
  );

  app.delete(
    '/api/objects/publish/:type/:relatedId',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: 'Unpublish; the object and its ciphertext stay',
        params: PublishParams,
        response: { 204: Type.Null({ description: 'Unpublished' }), ...errors(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await publish.unpublish(request.auth!.userId, request.params.type, request.params.relatedId);
      return reply.status(204).send(null);
    },
  );
}
