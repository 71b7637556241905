// Store keys (spec 4.7).
import { Type } from 'typebox';
import { IdParams, errors } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CreateKeyBody, KeyResponse } from './schemas.js';

export function keyRoutes(app: App, services: Services) {
  const { keys } = services.data;

  app.put(
    '/api/keys',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: 'Create a store key bound to a server: random, or bring your own (base64 key of 32 bytes and iv of 12)',
        body: CreateKeyBody,
        response: { 200: Type.Object({ id: Type.String({ description: 'The new key id' }) }), ...errors(400, 401, 403) },
      },
    },
    async (request) => keys.create(request.auth!.userId, request.body),
  );

  app.get(
    '/api/keys/:id',
    {
      config: { auth: 'verified' },
      schema: { tags: ['data'], summary: 'A store key, hex-encoded', params: IdParams, response: { 200: KeyResponse, ...errors(401, 403, 404) } },
    },
    async (request) => keys.get(request.auth!.userId, request.params.id),
  );

  app.delete(
    '/api/keys/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['data'],
        summary: "Delete a store key's metadata; objects encrypted with it stay",
        description: "409 for a store's default key.",
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await keys.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
