// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { filterableFields } from './payloads.js';
import { EVENT_TYPES } from './recorder.js';
import { eventSchemaId } from './schemas.js';

/** The stream's description: frames, replay, authentication and the fields each event type filters on. */
const eventStreamDescription = [
  'Frames carry `id`, `event` (the type) and `data` (the JSON payload, schema `<Type>Event` in components/schemas, e.g. `ObjectCreatedEvent`). Send `Last-Event-ID` (or `?lastEventId=`) to receive every stored event after that id first, then live ones, none missed or repeated.',
  '',
  'Authentication: `Authorization: Bearer`, the `token` cookie, or `?ticket=` from POST /api/events/ticket (EventSource in browser apps on other sites).',
  '',
  'Filters: every other query parameter filters on the payload field of that name, exact text with `*` matching any run of characters; repeat a parameter for any of several values; different parameters must all match; `a.b` reaches a nested field; numbers and booleans compare as their JSON text. A filter on a field an event lacks does not match that event, except `object_id`, which also matches the `id` of `object_created` (so `?object_id=<id>` follows one object from its creation on, and `?object_id=0193*` matches ids starting with 0193 in every object event). The fields each type can be filtered on:',
  '',
  ...EVENT_TYPES.map(
    (type) =>
      `- \`${type}\` (\`${eventSchemaId(type)}\`): ${filterableFields(type)
        .map((f) =>
          f
            .split(', ')
            .map((x) => `\`${x}\``)
            .join(', '),
        )
        .join(', ')}${type === 'object_created' ? ', and `object_id` (its `id`)' : ''}`,
  ),
  '',
  "Examples: `GET /api/events/object_created?related_object_id=<store id>` (records created in one store), `GET /api/events/call_status?session_id=<id>` (one call), `GET /api/events/call_transcript?session_id=<id>` (a live call's words), `GET /api/events/all?object_id=<id>` (one object).",
  '',
  'At most a configured number of open streams per user (429 `rate_limited` past it). A client too slow to read is disconnected and resumes with Last-Event-ID; a revoked credential ends the stream.',
].join('\n');

export const docs = describeRoutes({
  createEventTicket: {
    summary: 'A one-time ticket that opens an event stream without credentials (EventSource from another site)',
    description:
      'Authenticated like GET /api/events/{type}. `GET /api/events/{type}?ticket=<ticket>` accepts the ticket in place of credentials: EventSource cannot send an Authorization header, and the `token` cookie (SameSite=Lax) does not cross sites. A ticket opens one stream (single use), within 60 s (`expiresAt`), for the user and credential that asked for it; the stream then ends when that session ends or that API key is deleted, as any stream does. Ask for a new ticket before each (re)connection; pass the resume point as `?lastEventId=` (EventSource sends `Last-Event-ID` on its own reconnects, which a spent ticket cannot open: reconnect yourself with a new ticket). No body.',
  },
  streamEvents: {
    summary: 'Live stream of your events (server-sent events), with replay from Last-Event-ID',
    description: eventStreamDescription,
  },
});

export const examples = {
  createEventTicket: {
    ticket: 'eyJhbGciOiJIUzI1NiIsInR5cCI6ImV2ZW50LXRpY2tldCtqd3QifQ.eyJzdWIiOiIwMTkzIn0.c2lnbmF0dXJl',
    expiresAt: '2026-11-26T10:01:00.000Z',
  },
};
