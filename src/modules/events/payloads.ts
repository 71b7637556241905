// The payload of every event type (spec 6, plus sms_status, call_status and
// call_transcript), as shared schemas: the OpenAPI document lists them under
// components/schemas and describes the stream's frames with them, and the SDK's
// event types are generated from them. The writers build these payloads
// (data services, sms-service, calls service, voice runner); the events test
// checks real payloads of every type against these schemas.
import { type TSchema, Type } from 'typebox';
import { CALL_OUTCOMES, CALL_STATUSES } from '../../providers/audio/interface.js';
import { CallAnalysisEvent } from '../analysis/schemas.js';
import type { EventType } from './recorder.js';
import { CONTACT_STATUSES } from '../campaigns/tables.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Hex = (description: string) => Type.String({ pattern: '^[0-9a-f]*$', description });
const closed = { additionalProperties: false } as const;
const ex = {
  user: '0193a5c2-1b7e-7d4f-9a31-2c5e8f0b7d11',
  key: '0193a5c2-3c9d-7e21-8b4a-5d6f7a8b9c01',
  object: '0193a5c2-5e0b-7c3a-8d21-4f6a9b2c7e10',
  store: '0193a5c2-4a1f-7b22-9c3d-1e2f3a4b5c6d',
  session: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
  at: '2026-11-26T10:00:00.000Z',
};

export const KeyCreatedEvent = Type.Object(
  { key_id: Type.String(), user_id: Type.String(), created_at: Timestamp('When the key was created') },
  {
    $id: 'KeyCreatedEvent',
    ...closed,
    description: 'Payload of `key_created`: a key was added (PUT /api/keys, or the root keys of GET /api/root).',
    examples: [{ key_id: ex.key, user_id: ex.user, created_at: ex.at }],
  },
);

export const KeyDeletedEvent = Type.Object(
  { key_id: Type.String(), user_id: Type.String(), deleted_at: Timestamp('When the key was deleted') },
  {
    $id: 'KeyDeletedEvent',
    ...closed,
    description: 'Payload of `key_deleted`.',
    examples: [{ key_id: ex.key, user_id: ex.user, deleted_at: ex.at }],
  },
);

export const ObjectCreatedEvent = Type.Object(
  {
    id: Type.String({
      description: 'The new object (the one event that names its object `id`; the `object_id` filter matches it too)',
    }),
    key_id: Type.Union([Type.String(), Type.Null()], { description: 'null only on the root container' }),
    related_object_id: Type.Optional(
      Type.String({ description: 'The parent object (a store container for store records); absent without a parent' }),
    ),
    content: Hex('Ciphertext, as GET /api/objects/{id} answers it'),
    auth_tag: Hex('GCM tag'),
    iv: Type.Union([Hex('Nonce'), Type.Null()]),
    metadata: Type.Object(
      {
        size: Type.Integer({ description: 'Ciphertext bytes' }),
        kind: Type.Union([Type.Literal('root'), Type.Literal('store'), Type.Literal('object')]),
        store: Type.Optional(Type.String({ description: 'Store name, on store containers' })),
      },
      closed,
    ),
  },
  {
    $id: 'ObjectCreatedEvent',
    ...closed,
    description:
      'Payload of `object_created`: carries the ciphertext as GET /api/objects/{id} would, so it can be decrypted right away.',
    examples: [
      {
        id: ex.object,
        key_id: ex.key,
        related_object_id: ex.store,
        content: '9f2c4e',
        auth_tag: '3a7be0c1d2f3a4b5c6d7e8f9a0b1c2d3',
        iv: '0a1b2c3d4e5f60718293a4b5',
        metadata: { size: 3, kind: 'object' },
      },
    ],
  },
);

export const ObjectUpdatedEvent = Type.Object(
  {
    object_id: Type.String(),
    key_id: Type.Union([Type.String(), Type.Null()]),
    updated_at: Timestamp('When the change was made'),
    version: Type.Integer({
      minimum: 1,
      description: 'The version after the change (the ETag of GET /api/objects/{id})',
    }),
  },
  {
    $id: 'ObjectUpdatedEvent',
    ...closed,
    description:
      "Payload of `object_updated`: the object changed (PATCH, or a child detached by its parent's deletion). Fetch it for the new ciphertext.",
    examples: [{ object_id: ex.object, key_id: ex.key, updated_at: ex.at, version: 2 }],
  },
);

export const ObjectDeletedEvent = Type.Object(
  { object_id: Type.String(), deleted_at: Timestamp('When the object was deleted') },
  {
    $id: 'ObjectDeletedEvent',
    ...closed,
    description: 'Payload of `object_deleted`.',
    examples: [{ object_id: ex.object, deleted_at: ex.at }],
  },
);

const publishFields = {
  type: Type.String({ description: 'The logical type of the publication (e.g. calls, contacts)' }),
  related_id: Type.String({ description: 'The object published under' }),
  object_id: Type.String({ description: 'The published object' }),
  timestamp: Timestamp('When it was (un)published'),
};

export const PublishEvent = Type.Object(publishFields, {
  $id: 'PublishEvent',
  ...closed,
  description: 'Payload of `publish` (POST /api/objects/publish/{type}/{relatedId}).',
  examples: [{ type: 'contacts', related_id: ex.store, object_id: ex.object, timestamp: ex.at }],
});

export const UnpublishEvent = Type.Object(publishFields, {
  $id: 'UnpublishEvent',
  ...closed,
  description:
    'Payload of `unpublish` (DELETE /api/objects/publish/{type}/{relatedId}, or the published object deleted).',
  examples: [{ type: 'contacts', related_id: ex.store, object_id: ex.object, timestamp: ex.at }],
});

export const SmsStatusEvent = Type.Object(
  {
    message_id: Type.String({ description: 'The SMS (POST /api/sms/messages answered its id)' }),
    phone_number_id: Type.String({ description: 'The number it was sent from' }),
    from: Type.String(),
    to: Type.String(),
    status: Type.String({
      description: 'As the carrier names it: queued, sending, sent, delivered, undelivered, failed, …',
    }),
    error_code: Type.Union([Type.String(), Type.Null()], {
      description: "The carrier's error code of a failed delivery",
    }),
    at: Timestamp('When the status was reported'),
  },
  {
    $id: 'SmsStatusEvent',
    ...closed,
    description: 'Payload of `sms_status`: a new delivery status of an SMS you sent.',
    examples: [
      {
        message_id: ex.object,
        phone_number_id: ex.store,
        from: '+14155550100',
        to: '+14155550123',
        status: 'delivered',
        error_code: null,
        at: ex.at,
      },
    ],
  },
);

export const CallStatusEvent = Type.Object(
  {
    session_id: Type.String({ description: 'The call session (X-Session-Id of POST /api/session/call)' }),
    direction: Type.Optional(
      Type.Union([Type.Literal('outbound'), Type.Literal('inbound'), Type.Literal('web')], {
        description:
          'outbound, inbound or web (a call from a browser); absent only on events recorded before directions were reported',
      }),
    ),
    status: Type.Union(CALL_STATUSES.map((s) => Type.Literal(s))),
    at: Timestamp('When the status changed at the audio server'),
    duration_seconds: Type.Optional(Type.Number({ minimum: 0, description: 'When the call ended' })),
    transcript: Type.Optional(
      Type.Array(
        Type.Object(
          { role: Type.Union([Type.Literal('agent'), Type.Literal('contact')]), text: Type.String() },
          closed,
        ),
        { description: 'When completed' },
      ),
    ),
    outcome: Type.Optional(
      Type.Union(
        CALL_OUTCOMES.map((o) => Type.Literal(o)),
        { description: 'Final states of calls the built-in voice agent carries: why it ended' },
      ),
    ),
    reason: Type.Optional(Type.String({ description: 'A short machine reason next to outcome' })),
    campaign_id: Type.Optional(Type.String({ description: 'The campaign the call is an attempt of' })),
  },
  {
    $id: 'CallStatusEvent',
    ...closed,
    description:
      'Payload of `call_status`: progress of a call session; also the `data` of the session\'s webhook `{ type: "call_status", timestamp, data }`.',
    examples: [
      {
        session_id: ex.session,
        direction: 'outbound',
        status: 'completed',
        at: ex.at,
        duration_seconds: 42,
        transcript: [{ role: 'agent', text: 'Hello!' }],
        outcome: 'completed',
      },
    ],
  },
);

export const CallTranscriptEvent = Type.Object(
  {
    session_id: Type.String(),
    role: Type.Union([Type.Literal('agent'), Type.Literal('caller')]),
    text: Type.String(),
    at: Timestamp('When the line was said'),
    interrupted: Type.Optional(
      Type.Boolean({
        description:
          'An agent sentence cut by barge-in: `text` is what the caller heard of the agent line sent before it (empty when none of it)',
      }),
    ),
  },
  {
    $id: 'CallTranscriptEvent',
    ...closed,
    description:
      "Payload of `call_transcript`: one line of a live call's transcript (the built-in voice agent), as it is said. An agent line is one sentence, sent when the agent starts saying it (not once it has played); a sentence the caller cut by speaking over it is followed by a line with what was heard of it and `interrupted: true`. A caller line comes at the end of the caller's turn. The call's record (GET /api/calls/{id}) keeps what was heard, one agent line per reply.",
    examples: [
      { session_id: ex.session, role: 'caller', text: 'I would like to book a table.', at: ex.at },
      { session_id: ex.session, role: 'agent', text: 'We are open Monday to Friday', at: ex.at, interrupted: true },
    ],
  },
);

export const CallNodeEvent = Type.Object(
  {
    session_id: Type.String(),
    node: Type.String({ description: 'The pathway node the call entered' }),
    from: Type.Optional(Type.String({ description: 'The node it left; absent for the start' })),
    at: Timestamp('When the call entered the node'),
  },
  {
    $id: 'CallNodeEvent',
    ...closed,
    description:
      "Payload of `call_node`: a call that walks a conversation pathway moved to a node (the start, then each edge taken: by the model's choose_path, a variable's condition, keywords, a webhook's answer). The call's record (GET /api/calls/{id}) keeps the whole path under `pathway.path`.",
    examples: [
      { session_id: ex.session, node: 'greet', at: ex.at },
      { session_id: ex.session, node: 'lookup', from: 'greet', at: ex.at },
    ],
  },
);

export const AgentTestRunEvent = Type.Object(
  {
    run_id: Type.String(),
    status: Type.Union(
      [
        Type.Literal('queued'),
        Type.Literal('running'),
        Type.Literal('passed'),
        Type.Literal('failed'),
        Type.Literal('error'),
      ],
      { description: 'queued, then running when its first test starts, then how it ended' },
    ),
    at: Timestamp('When the run was in this state'),
  },
  {
    $id: 'AgentTestRunEvent',
    ...closed,
    description:
      'Payload of `agent_test_run`: a run of agent tests (POST /api/agent-tests/runs) was queued, started or ended; GET /api/agent-tests/runs/{runId} has its results.',
    examples: [{ run_id: '019ae0c1-2b3c-7d4e-8f50-6172839a4b5c', status: 'failed', at: ex.at }],
  },
);

const CampaignCounts = Type.Object(
  Object.fromEntries(['total', ...CONTACT_STATUSES].map((k) => [k, Type.Integer({ minimum: 0 })])),
  closed,
);

export const CampaignStatusEvent = Type.Object(
  {
    campaign_id: Type.String(),
    status: Type.Union(['draft', 'running', 'paused', 'completed', 'cancelled'].map((s) => Type.Literal(s))),
    reason: Type.Optional(
      Type.String({
        description: 'Why it paused or ended by itself: insufficient_funds, budget_reached, schedule_ended',
      }),
    ),
    counts: CampaignCounts,
    at: Timestamp('When the campaign was in this state'),
  },
  {
    $id: 'CampaignStatusEvent',
    ...closed,
    description:
      'Payload of `campaign_status`: a campaign changed status, or (at most once a second while it runs) its counts changed; also the `data` of the campaign\'s webhook `{ type: "campaign_status", timestamp, data }`.',
    examples: [
      {
        campaign_id: '019ae0c1-2b3c-7d4e-8f50-6172839a4b5c',
        status: 'running',
        counts: {
          total: 3,
          pending: 1,
          calling: 1,
          completed: 1,
          voicemail: 0,
          no_answer: 0,
          busy: 0,
          failed: 0,
          opted_out: 0,
          do_not_call: 0,
        },
        at: ex.at,
      },
    ],
  },
);

/** Every event type's payload schema. */
export const eventPayloadSchemas: Record<EventType, TSchema> = {
  key_created: KeyCreatedEvent,
  key_deleted: KeyDeletedEvent,
  object_created: ObjectCreatedEvent,
  object_updated: ObjectUpdatedEvent,
  object_deleted: ObjectDeletedEvent,
  publish: PublishEvent,
  unpublish: UnpublishEvent,
  sms_status: SmsStatusEvent,
  call_status: CallStatusEvent,
  call_transcript: CallTranscriptEvent,
  call_analysis: CallAnalysisEvent,
  call_node: CallNodeEvent,
  agent_test_run: AgentTestRunEvent,
  campaign_status: CampaignStatusEvent,
};

/** Which query parameter filters which payload field, per type, for the stream's description. */
export function filterableFields(type: EventType): string[] {
  const schema = eventPayloadSchemas[type] as unknown as {
    properties: Record<string, { type?: unknown; anyOf?: unknown }>;
  };
  return Object.entries(schema.properties)
    .filter(([name]) => !['content', 'auth_tag', 'iv', 'transcript'].includes(name))
    .map(([name]) => (name === 'metadata' ? 'metadata.kind, metadata.store, metadata.size' : name));
}
