// OpenAPI 3.1 document generated from the route schemas, served at
// /api/openapi.json, with a docs UI at /api/docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export const openapiInfo = {
  title: 'Workspace API',
  version: '1.0.0',
  description:
    'Account access, an end-to-end encrypted object store with change streams, telephony, knowledge, personas, integrations and billing. Errors answer `{ message, code }`.',
};

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: openapiInfo,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or API key (wsk_…)' },
          cookieAuth: { type: 'apiKey', in: 'cookie', name: 'token' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
