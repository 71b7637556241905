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
      Type.String({ description: 'Replay events after this id first (the Last-Event-ID header, when sent, takes precedence)', examples: ['1042'] }),
    ),
  },
  {
    additionalProperties: true,
    description: 'Every other parameter filters on the payload field of that name: exact text, `*` matches any run of characters (`?object_id=0193*`); repeat a parameter to accept any of several values',
  },
);

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ description: 'Sent by EventSource on reconnect: replay events after this id' })),
});

export const EventStreamBody = Type.String({
  description:
    'text/event-stream. Starts with `retry: 2000` and `: connected`; then one frame per event (`id: <event id>`, `event: <type>`, `data: <JSON payload>`, blank line); a `: keep-alive` comment every 15 s.',
  examples: ['id: 42\nevent: object_deleted\ndata: {"object_id":"0193…","deleted_at":"2026-11-22T10:00:00.000Z"}\n\n'],
});
