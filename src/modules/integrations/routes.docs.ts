// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

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

export const docs = describeRoutes({
  listIntegrations: {
    summary: 'Your integrations, tokens masked',
    description: 'Oldest first. Token-like fields are masked (abcd…wxyz); the clear token is never shown again.',
  },
  createIntegration: {
    summary: 'Add an integration: credentials validated with the provider, then stored',
    description:
      'Calendly: the token is checked with GET /users/me and the event type found among GET /event_types of that user, by URL, API uri or slug. The token is stored encrypted with the master key. 400 `invalid_input` for an unknown type, missing fields, non-string values or an unknown event type; 400 `provider_refused` for a token Calendly refuses; 502 when Calendly cannot be reached.',
  },
  deleteIntegration: {
    summary: 'Revoke an integration',
    description: 'Deletes the integration and its stored token at once; 404 when it is not yours.',
  },
});

export const examples = {
  integration: example,
  integrationBody: {
    type: 'calendly',
    data: {
      accessToken: 'eyJraWQiOiIxY2UxZTEzNjE3ZGNm.eyJpc3MiOiJodHRwczovL2F1dGguY2FsZW5kbHkuY29tIn0.9xQz',
      eventTypeUrl: 'https://calendly.com/acme/30min',
    },
  },
  listIntegrations: [example],
};
