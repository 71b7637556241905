// Encrypted objects (spec 4.8). GET, PUT and PATCH answer an ETag of the
// object's version; PATCH honours If-Match.
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { IdParams, errorResponses, ok } from '../../http/schemas.js';
import { exampleObject, exampleObjectBody } from './examples.js';
import type { App } from '../../http/types.js';
import type { ObjectService } from './objects-service.js';
import { etagOf } from './encoding.js';
import { type ObjectView, objectViewBody } from './objects-view.js';
import { IfMatchHeaders, ObjectBody, ObjectResponse, RelatedQuery } from './schemas.js';

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
        operationId: 'createObject',
        summary: 'Store an encrypted object (base64 in); answers it hex-encoded, with its version as ETag',
        description:
          '400 invalid base64, wrong tag or iv length; 400 invalid_key when keyId is not one of your keys; 404 unknown relatedId; 413 content over the limit.',
        body: Type.Object(ObjectBody.properties, { examples: [exampleObjectBody] }),
        response: {
          200: ok(ObjectWithEtag, 'The stored object', exampleObject),
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
        operationId: 'getObject',
        summary: 'An object: content, auth_tag and iv hex-encoded',
        description:
          "Only your own objects; another user's object answers 404 like a missing one. The version is also the ETag.",
        params: IdParams,
        response: { 200: ok(ObjectWithEtag, 'The object', exampleObject), ...errorResponses('not_found') },
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
        operationId: 'updateObject',
        summary: 'Replace the ciphertext in place; with If-Match only if the object is still at that version',
        description:
          '412 version_mismatch when If-Match names a stale version; 409 for the root and store containers; 400 when relatedId would create a cycle.',
        params: IdParams,
        headers: IfMatchHeaders,
        body: Type.Object(ObjectBody.properties, { examples: [exampleObjectBody] }),
        response: {
          200: ok(ObjectWithEtag, 'The updated object (version + 1)', { ...exampleObject, version: 2 }),
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
        operationId: 'deleteObject',
        summary: 'Delete an object and its publications; its children are detached (relatedId cleared), not deleted',
        description: '409 for the root and store containers.',
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
        operationId: 'listRelatedObjects',
        summary: 'The children of an object (relatedId = id), oldest first, hex-encoded like GET',
        description:
          'Pages with `limit` and `after` (the id of the last child of the previous page). A page holds at most `limit` children (1000 when omitted) and ends early rather than grow past about RELATED_PAGE_BYTES (16 MiB of JSON; hex doubles the ciphertext), though it always holds at least one child. ' +
          'When more children may follow, the answer carries `X-Next-After` (the `after` of the next page) and a `Link: <…>; rel="next"` header; without them the listing is complete. Keep asking with `after` until they are absent.',
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
            [exampleObject],
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
