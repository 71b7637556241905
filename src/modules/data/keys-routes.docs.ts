// What the OpenAPI document says of the routes in keys-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleIds, exampleKey } from './examples.js';

export const docs = describeRoutes({
  createKey: {
    summary: 'Create a store key bound to a server: random, or bring your own (base64 key of 32 bytes and iv of 12)',
    description:
      "The server is one of your registered servers or the service's current server (GET /api/server). 400 `invalid_input` for an unknown server or a key or iv of the wrong length.",
  },
  getKey: {
    summary: 'A store key, hex-encoded',
    description: "Only your own keys; another user's key answers 404 like a missing one.",
  },
  deleteKey: {
    summary: "Delete a store key's metadata; objects encrypted with it stay",
    description: "409 for a store's default key.",
  },
});

export const examples = {
  getKey: exampleKey,
  createKey: {
    id: exampleIds.KEY_ID,
  },
  createKeyBody: { server: 'backend-1' },
};
