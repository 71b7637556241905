// API keys (spec 4.6).
import { Type } from 'typebox';
import { errorResponses, IdParams, ok } from '../../http/schemas.js';
import { type App, metaOf } from '../../http/types.js';
import type { ApiKeyService } from './service.js';
import { docs, examples } from './routes.docs.js';

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'Masked (wsk_…abcd) in listings; the clear key only in the creation answer' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

/** What the API-key routes touch. */
export interface ApiKeyRouteDeps {
  apiKeys: ApiKeyService;
}

export function apiKeyRoutes(app: App, deps: ApiKeyRouteDeps) {
  const { apiKeys } = deps;

  app.get(
    '/api/api-keys',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['api-keys'],
        ...docs.listApiKeys,
        response: {
          200: ok(Type.Array(ApiKey), 'Your keys, masked', examples.listApiKeys),
        },
      },
    },
    async (request) => apiKeys.list(request.auth!.userId),
  );

  app.put(
    '/api/api-keys',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['api-keys'],
        ...docs.createApiKey,
        body: Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: 100,
              pattern: '\\S',
              description: 'Stored trimmed; must contain a non-space character',
            }),
          },
          { examples: [examples.createApiKeyBody] },
        ),
        response: { 200: ok(ApiKey, 'The new key, in clear this once', examples.createApiKey) },
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
        ...docs.deleteApiKey,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await apiKeys.delete(request.auth!.userId, request.params.id, metaOf(request));
      return reply.status(204).send(null);
    },
  );
}
