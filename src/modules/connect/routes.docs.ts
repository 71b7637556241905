// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  runConnectorJob: {
    summary: 'Ingest records from the connector into an encrypted store',
    description:
      "Streams `POST {CONNECTOR_URL}{path}` (SSE or NDJSON); each frame that is a JSON object is encrypted with the store's default key (AES-256-GCM, a fresh 12-byte IV) and created as a child of the store, emitting `object_created`. Answers 204 when the stream ends, with `X-Objects-Written`, `X-Frames-Skipped` and (for `/get-leads`) `X-Credits-Granted`. `/get-leads` clamps `params.credits` to the plan's remaining lead allowance plus what the prepaid balance buys (`LEAD_PRICE_USD` each), reserves the paid part, charges only delivered leads and returns the rest; no allowance: 204 at once. 400 unknown repository (the message lists the eight); 402 when the balance fell before the reservation; 502 when the connector fails (written objects stay, counts in the body).",
  },
});

export const examples = {
  connectBody: { repository: 'contacts', path: '/get-leads', params: { credits: 25 } },
  connectorFailure: {
    message: 'connector stream broke off: terminated',
    code: 'provider_error',
    written: 120,
    skipped: 1,
    credits: 500,
  },
};
