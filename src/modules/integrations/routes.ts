// Integrations (spec 4.17): list, add (validated with the provider), revoke.
import { Type } from 'typebox';
import { errorResponses, IdParams, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { IntegrationService } from './service.js';

const example = {
  id: '0193a0d2-7c1e-7b3a-9f10-3c5d2e8b1a42',
  type: 'calendly',
  data: {
    eventTypeUri: 'https://api.calendly.com/event_types/AAAAAAAAAAAAAAAA',
    eventTypeSlug: '30min',
    eventTypeName: '30 Minute Meeting',
    userUri: 'https://api.calendly.com/users/BBBBBBBBBBBBBBBB',
    schedulingUrl: 'https://calendly.com/acme/30min',
    accessToken: 'eyJr…9xQz',
  },
  createdAt: '2026-11-23T10:00:00.000Z',
};

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
  { title: 'Integration', examples: [example] },
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
    examples: [
      {
        type: 'calendly',
        data: {
          accessToken: 'eyJraWQiOiIxY2UxZTEzNjE3ZGNm.eyJpc3MiOiJodHRwczovL2F1dGguY2FsZW5kbHkuY29tIn0.9xQz',
          eventTypeUrl: 'https://calendly.com/acme/30min',
        },
      },
    ],
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
        operationId: 'listIntegrations',
        summary: 'Your integrations, tokens masked',
        description: 'Oldest first. Token-like fields are masked (abcd…wxyz); the clear token is never shown again.',
        response: {
          200: ok(
            Type.Array(Integration, { title: 'IntegrationList' }),
            'Your integrations, oldest first, tokens masked',
            [example],
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
        operationId: 'createIntegration',
        summary: 'Add an integration: credentials validated with the provider, then stored',
        description:
          'Calendly: the token is checked with GET /users/me and the event type found among GET /event_types of that user, by URL, API uri or slug. The token is stored encrypted with the master key. 400 `invalid_input` for an unknown type, missing fields, non-string values or an unknown event type; 400 `provider_refused` for a token Calendly refuses; 502 when Calendly cannot be reached.',
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
        operationId: 'deleteIntegration',
        summary: 'Revoke an integration',
        description: 'Deletes the integration and its stored token at once; 404 when it is not yours.',
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
