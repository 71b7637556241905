// API keys (spec 4.6).
import { Type } from 'typebox';
import { errors, IdParams } from '../../http/schemas.js';
import { type App, metaOf } from '../../http/types.js';
import type { Services } from '../../services.js';

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'Masked (wsk_…abcd) in listings; the clear key only in the creation answer' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function apiKeyRoutes(app: App, services: Services) {
  const { apiKeys } = services;

  app.get(
    '/api/api-keys',
    {
      config: { auth: 'user' },
      schema: { tags: ['api-keys'], summary: "The caller's API keys, masked", response: { 200: Type.Array(ApiKey), ...errors(401, 403) } },
    },
    async (request) => apiKeys.list(request.auth!.userId),
  );

  app.put(
    '/api/api-keys',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['api-keys'],
        summary: 'Create an API key; the clear key is in this answer only',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Stored trimmed; must contain a non-space character' }) }),
        response: { 200: ApiKey, ...errors(400, 401, 403) },
      },
    },
    async (request) => apiKeys.create(request.auth!.userId, request.body.name, metaOf(request)),
  );

  app.delete(
    '/api/api-keys/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['api-keys'],
        summary: 'Revoke an API key (phone-verified owner only)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errors(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await apiKeys.delete(request.auth!.userId, request.params.id, metaOf(request));
      return reply.status(204).send(null);
    },
  );
}
