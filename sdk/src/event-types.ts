// Event names and payloads of the stream. The payload types are generated from
// the OpenAPI document (components/schemas `<Type>Event`, the schemas the
// server's writers follow: src/modules/events/payloads.ts), so they cannot
// drift from what the server sends.
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];

export const EVENT_TYPES = [
  'key_created',
  'key_deleted',
  'object_created',
  'object_updated',
  'object_deleted',
  'publish',
  'unpublish',
  'sms_status',
  'call_status',
  'call_transcript',
  'campaign_status',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventPayloads {
  key_created: Schemas['KeyCreatedEvent'];
  key_deleted: Schemas['KeyDeletedEvent'];
  /** Carries the ciphertext as GET /api/objects/{id} would (hex), so it can be decrypted right away. */
  object_created: Schemas['ObjectCreatedEvent'];
  object_updated: Schemas['ObjectUpdatedEvent'];
  object_deleted: Schemas['ObjectDeletedEvent'];
  publish: Schemas['PublishEvent'];
  unpublish: Schemas['UnpublishEvent'];
  /** A new delivery status of an SMS you sent (POST /api/sms/messages). */
  sms_status: Schemas['SmsStatusEvent'];
  /** Progress of a call session; also delivered to the session's webhook as `data` of `{ type: "call_status", timestamp, data }`. */
  call_status: Schemas['CallStatusEvent'];
  /** One line of a live call's transcript (the built-in voice agent), as it is said. */
  call_transcript: Schemas['CallTranscriptEvent'];
  /** A campaign changed status, or (at most once a second while it runs) its counts changed. */
  campaign_status: Schemas['CampaignStatusEvent'];
}

/** The payload of one or several event types. */
export type PayloadOf<E extends EventType> = EventPayloads[E];
