// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

const keyExample = {
  id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
  name: 'deploy',
  key: 'wsk_3q2-7w9Z1bq0kS5xW8yD4vL6nH2mJ0pR7tY9uI1oQx3v',
  createdAt: '2026-11-23T12:00:00.000Z',
  lastUsedAt: null,
};

export const docs = describeRoutes({
  listApiKeys: {
    summary: "The caller's API keys, masked",
    description: 'Oldest first; each key shows only its last four characters.',
  },
  createApiKey: {
    summary: 'Create an API key; the clear key is in this answer only',
    description:
      'The key authenticates as you wherever a session token does (send it as a bearer token), until you delete it or reset your password (a reset deletes every key). Store it now: only a hash is kept.',
  },
  deleteApiKey: {
    summary: 'Revoke an API key (phone-verified owner only)',
    description: 'The key stops working at once, on every instance.',
  },
});

export const examples = {
  createApiKey: keyExample,
  listApiKeys: [{ ...keyExample, key: 'wsk_…Qx3v', lastUsedAt: '2026-11-23T13:05:00.000Z' }],
  createApiKeyBody: { name: 'deploy' },
};
