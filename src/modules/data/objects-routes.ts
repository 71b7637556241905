// Encrypted objects (spec 4.8). GET, PUT and PATCH answer an ETag of the
// object's version; PATCH honours If-Match.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ObjectService } from './objects-service.js';
import { etagOf } from './encoding.js';
import { type ObjectView, objectViewBody } from './objects-view.js';
import { IfMatchHeaders, ObjectBody, ObjectResponse, RelatedQuery } from './schemas.js';
import { docs, examples } from './objects-routes.docs.js';

/** An object answer, with its version as the ETag header (send it back as If-Match). */
const ObjectWithEtag = Type.Object(ObjectResponse.properties, {
  headers: {
    etag: Type.String({
      description: 'The object\'s version, quoted (`"3"`): send it as If-Match on PATCH',
      examples: ['"1"'],
    }),
  },
});

/**
 * An object answer: its version as the ETag, the body written by
 * objectViewBody (the same bytes as the response schema's serializer, without
 * scanning the hex for characters to escape or copying the text on its way out).
 */
function answerObject(reply: FastifyReply, object: ObjectView): ObjectView {
  reply
    .header('etag', etagOf(object.version))
    .header('content-type', 'application/json; charset=utf-8')
    .serializer(objectViewBody as unknown as (payload: unknown) => string);
  return object;
}

/** The body limits object uploads are measured against. */
export interface ObjectRouteLimits {
  bodyLimitBytes: number;
  objectContentLimitBytes: number;
}

export function objectRoutes(app: App, objects: ObjectService, config: ObjectRouteLimits) {
  // Content travels as base64 (4/3 of its size) inside JSON: let an object at
  // the content limit through even when the general body limit is lower.
  const bodyLimit = Math.max(config.bodyLimitBytes, Math.ceil(config.objectContentLimitBytes / 3) * 4 + 64 * 1024);

  app.put(
    '/api/objects',
    {
      bodyLimit,
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.createObject,
        body: Type.Object(ObjectBody.properties, { examples: [examples.objectBody] }),
        response: {
          200: ok(ObjectWithEtag, 'The stored object', examples.object),
          ...errorResponses('invalid_key', 'not_found', 'payload_too_large'),
        },
      },
    },
    async (request, reply) => {
      return answerObject(reply, await objects.createObject(request.auth!.userId, request.body));
    },
  );

  app.get(
    '/api/objects/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.getObject,
        params: IdParams,
        response: { 200: ok(ObjectWithEtag, 'The object', examples.object), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      return answerObject(reply, await objects.getObject(request.auth!.userId, request.params.id));
    },
  );

  app.patch(
    '/api/objects/:id',
    {
      bodyLimit,
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.updateObject,
        params: IdParams,
        headers: IfMatchHeaders,
        body: Type.Object(ObjectBody.properties, { examples: [examples.objectBody] }),
        response: {
          200: ok(ObjectWithEtag, 'The updated object (version + 1)', examples.updateObject),
          ...errorResponses('invalid_key', 'not_found', 'conflict', 'version_mismatch', 'payload_too_large'),
        },
      },
    },
    async (request, reply) => {
      return answerObject(
        reply,
        await objects.updateObject(request.auth!.userId, request.params.id, request.body, request.headers['if-match']),
      );
    },
  );

  app.delete(
    '/api/objects/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.deleteObject,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses('not_found', 'conflict') },
      },
    },
    async (request, reply) => {
      await objects.deleteObject(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/objects/:id/related',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        ...docs.listRelatedObjects,
        params: IdParams,
        querystring: RelatedQuery,
        response: {
          200: ok(
            Type.Array(ObjectResponse, {
              headers: {
                'x-next-after': Type.String({
                  description: 'Present when more children may follow: pass it as `after` for the next page',
                }),
                link: Type.String({
                  description:
                    'Present when more children may follow: `</api/objects/{id}/related?after=…&limit=…>; rel="next"`',
                }),
              },
            }),
            'The children, oldest first (one page)',
            examples.listRelatedObjects,
          ),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const page = await objects.listRelated(request.auth!.userId, id, request.query);
      if (page.next !== null) {
        const query = new URLSearchParams({
          after: page.next,
          ...(request.query.limit ? { limit: String(request.query.limit) } : {}),
        });
        reply.header('x-next-after', page.next);
        reply.header('link', `</api/objects/${encodeURIComponent(id)}/related?${query}>; rel="next"`);
      }
      return page.items;
    },
  );
}
