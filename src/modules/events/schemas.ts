import { Type } from 'typebox';
import { EVENT_TYPES } from './recorder.js';

export const EventStreamParams = Type.Object({
  type: Type.String({
    minLength: 1,
    maxLength: 300,
    description: `One of ${EVENT_TYPES.join(', ')}; several, comma-separated; or \`all\` (also \`*\`) for every type`,
    examples: ['object_created', 'publish,unpublish', 'all'],
  }),
});

export const EventStreamQuery = Type.Object(
  {
    lastEventId: Type.Optional(
      Type.String({
        description: 'Replay events after this id first (the Last-Event-ID header, when sent, takes precedence)',
        examples: ['1042'],
      }),
    ),
    ticket: Type.Optional(
      Type.String({
        maxLength: 4096,
        description:
          'A ticket from POST /api/events/ticket, in place of credentials (EventSource from another site); not a filter',
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      'Every other parameter filters on the payload field of that name: exact text, `*` matches any run of characters (`?object_id=0193*`); repeat a parameter to accept any of several values. The fields of each type are listed in the operation description.',
  },
);

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ description: 'Sent by EventSource on reconnect: replay events after this id' }),
  ),
});

/** The stream, described as the frames it carries: `event` names the type, `data` is that type's payload schema. */
export const EventStreamBody = Type.Array(
  Type.Union(
    EVENT_TYPES.map((type) =>
      Type.Object(
        {
          id: Type.String({ pattern: '^[0-9]+$', description: 'The event id (resume after it with Last-Event-ID)' }),
          event: Type.Literal(type),
          data: Type.Ref(eventSchemaId(type)),
        },
        { additionalProperties: false, description: `A frame of \`${type}\`` },
      ),
    ),
  ),
  {
    description:
      'text/event-stream, described here as the list of frames it carries. On the wire: `retry: 2000` and a `: connected` comment, then per event `id: <id>`, `event: <type>`, `data: <the payload as one line of JSON>` and a blank line; a `: keep-alive` comment every 15 s.',
    examples: [
      [
        {
          id: '42',
          event: 'object_deleted',
          data: { object_id: '0193a5c2-5e0b-7c3a-8d21-4f6a9b2c7e10', deleted_at: '2026-11-22T10:00:00.000Z' },
        },
      ],
    ],
  },
);

export function eventSchemaId(type: (typeof EVENT_TYPES)[number]): string {
  return `${type
    .split('_')
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}Event`;
}

export const EventTicket = Type.Object({
  ticket: Type.String({ description: 'Pass as `?ticket=` to GET /api/events/{type}; opens one stream' }),
  expiresAt: Type.String({ format: 'date-time', description: 'Not accepted from then on (60 s after issue)' }),
});
