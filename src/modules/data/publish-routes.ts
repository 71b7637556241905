// Publish associations (spec 4.8, 3.2).
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import { exampleIds } from './examples.js';
import type { App } from '../../http/types.js';
import type { PublishService } from './publish-service.js';
import { PublicationResponse, PublishBody, PublishParams } from './schemas.js';

export function publishRoutes(app: App, publish: PublishService) {
  app.put(
    '/api/objects/publish/:type/:relatedId',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        operationId: 'publishObject',
        summary: 'Publish one of your objects under a type and relatedId (replaces what was published there)',
        description:
          'Records that the object is what `type`/`relatedId` shows (e.g. the agent a call uses); a publish event goes to your event streams.',
        params: PublishParams,
        body: Type.Object(PublishBody.properties, { examples: [{ objectId: exampleIds.ID }] }),
        response: {
          200: ok(PublicationResponse, 'Published', {
            type: 'agents',
            relatedId: 'agent-7',
            objectId: exampleIds.ID,
            publishedAt: exampleIds.AT,
          }),
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
        operationId: 'unpublishObject',
        summary: 'Unpublish; the object and its ciphertext stay',
        description:
          '404 when nothing is published under this type and relatedId; an unpublish event goes to your event streams.',
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
