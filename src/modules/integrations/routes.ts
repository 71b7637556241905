// Integrations (spec 4.17): list, add (validated with the provider), revoke.
import { Type } from 'typebox';
import { errorResponses, IdParams, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { IntegrationService } from './service.js';
import { docs, examples } from './routes.docs.js';

const Integration = Type.Object(
  {
    id: Type.String(),
    type: Type.String({ description: 'Only `calendly`' }),
    data: Type.Object(
      {
        eventTypeUri: Type.String(),
        eventTypeSlug: Type.String(),
        eventTypeName: Type.String(),
        userUri: Type.String(),
        schedulingUrl: Type.Optional(Type.String()),
        accessToken: Type.String({
          description: 'Masked: first and last four characters around an ellipsis (abcd…wxyz)',
        }),
      },
      { description: 'The sanitized payload (spec 2.16)' },
    ),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Integration', examples: [examples.integration] },
);

const IntegrationBody = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 50, description: '`calendly`' }),
    data: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), {
      description:
        'Strings only. The token under accessToken, apiKey, token or pat; the event type under eventTypeUrl, eventType (URL, API uri or slug) or eventTypeSlug. Other keys are ignored.',
      examples: [{ accessToken: 'eyJraWQiOi…', eventTypeUrl: 'https://calendly.com/acme/30min' }],
    }),
  },
  {
    examples: [examples.integrationBody],
  },
);

/** What the integration routes touch. */
export interface IntegrationRouteDeps {
  integrations: IntegrationService;
}

export function integrationRoutes(app: App, deps: IntegrationRouteDeps) {
  const { integrations } = deps;

  app.get(
    '/api/integrations',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['integrations'],
        ...docs.listIntegrations,
        response: {
          200: ok(
            Type.Array(Integration, { title: 'IntegrationList' }),
            'Your integrations, oldest first, tokens masked',
            examples.listIntegrations,
          ),
        },
      },
    },
    async (request) => integrations.list(request.auth!.userId),
  );

  app.put(
    '/api/integrations',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['integrations'],
        ...docs.createIntegration,
        body: IntegrationBody,
        response: {
          200: ok(Integration, 'The stored integration, token masked'),
          ...errorResponses('invalid_input', 'provider_refused', 'provider_error'),
        },
      },
    },
    async (request) => integrations.create(request.auth!.userId, request.body),
  );

  app.delete(
    '/api/integrations/:id',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['integrations'],
        ...docs.deleteIntegration,
        params: IdParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses('not_found') },
      },
    },
    async (request, reply) => {
      await integrations.delete(request.auth!.userId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
