// Publish associations (spec 4.8, 3.2).
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { PublishService } from './publish-service.js';
import { PublicationResponse, PublishBody, PublishParams } from './schemas.js';
import { docs, examples } from './publish-routes.docs.js';

export function publishRoutes(app: App, publish: PublishService) {
  app.put(
    '/api/objects/publish/:type/:relatedId',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.publishObject,
        params: PublishParams,
        body: Type.Object(PublishBody.properties, { examples: [examples.publishObjectBody] }),
        response: {
          200: ok(PublicationResponse, 'Published', examples.publishObject),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) =>
      publish.publish(request.auth!.userId, request.params.type, request.params.relatedId, request.body.objectId),
  );

  app.delete(
    '/api/objects/publish/:type/:relatedId',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.unpublishObject,
        params: PublishParams,
        response: { 204: Type.Null({ description: 'Unpublished' }), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await publish.unpublish(request.auth!.userId, request.params.type, request.params.relatedId);
      return reply.status(204).send(null);
    },
  );
}
