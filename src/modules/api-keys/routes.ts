// API keys (spec 4.6).
import { Type } from 'typebox';
import { errorResponses, IdParams, ok } from '../../http/schemas.js';
import { type App, metaOf } from '../../http/types.js';
import type { ApiKeyService } from './service.js';

const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'Masked (wsk_…abcd) in listings; the clear key only in the creation answer' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const keyExample = {
  id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
  name: 'deploy',
  key: 'wsk_3q2-7w9Z1bq0kS5xW8yD4vL6nH2mJ0pR7tY9uI1oQx3v',
  createdAt: '2026-11-23T12:00:00.000Z',
  lastUsedAt: null,
};

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
        operationId: 'listApiKeys',
        summary: "The caller's API keys, masked",
        description: 'Oldest first; each key shows only its last four characters.',
        response: {
          200: ok(Type.Array(ApiKey), 'Your keys, masked', [
            { ...keyExample, key: 'wsk_…Qx3v', lastUsedAt: '2026-11-23T13:05:00.000Z' },
          ]),
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
        operationId: 'createApiKey',
        summary: 'Create an API key; the clear key is in this answer only',
        description:
          'The key authenticates as you wherever a session token does (send it as a bearer token), until you delete it or reset your password (a reset deletes every key). Store it now: only a hash is kept.',
        body: Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: 100,
              pattern: '\\S',
              description: 'Stored trimmed; must contain a non-space character',
            }),
          },
          { examples: [{ name: 'deploy' }] },
        ),
        response: { 200: ok(ApiKey, 'The new key, in clear this once', keyExample) },
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
        operationId: 'deleteApiKey',
        summary: 'Revoke an API key (phone-verified owner only)',
        description: 'The key stops working at once, on every instance.',
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
