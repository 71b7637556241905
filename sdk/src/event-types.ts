// Event names and payloads of the stream (spec 6). Server-sent events are not
// described by the OpenAPI document, so these are written by hand; the
// ciphertext fields reuse the object types generated from it, and the SDK's
// tests check a real stream's payloads against these names.
import type { StoredObject } from './data.js';

export const EVENT_TYPES = ['key_created', 'key_deleted', 'object_created', 'object_updated', 'object_deleted', 'publish', 'unpublish', 'sms_status', 'call_status', 'call_transcript'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventPayloads {
  key_created: { key_id: string; user_id: string; created_at: string };
  key_deleted: { key_id: string; user_id: string; deleted_at: string };
  /** Carries the ciphertext as GET /api/objects/{id} would (hex), so it can be decrypted right away. */
  object_created: {
    id: string;
    key_id: string | null;
    related_object_id?: string;
    content: StoredObject['content'];
    auth_tag: StoredObject['auth_tag'];
    iv: StoredObject['iv'];
    metadata: StoredObject['metadata'];
  };
  object_updated: { object_id: string; key_id: string | null; updated_at: string; version?: number };
  object_deleted: { object_id: string; deleted_at: string };
  publish: { type: string; related_id: string; object_id?: string; timestamp: string };
  unpublish: { type: string; related_id: string; object_id?: string; timestamp: string };
  /** A new delivery status of an SMS you sent (POST /api/sms/messages); `status` as Twilio names it (queued, sent, delivered, …). */
  sms_status: { message_id: string; phone_number_id: string; from: string; to: string; status: string; error_code: string | null; at: string };
  /** Progress of a call session; also delivered to the session's webhook as `data` of `{ type: "call_status", timestamp, data }`. */
  call_status: {
    session_id: string;
    /** Absent only on events recorded before directions were reported. */
    direction?: 'outbound' | 'inbound' | 'web';
    status: 'queued' | 'ringing' | 'in_progress' | 'completed' | 'failed' | 'busy' | 'no_answer' | 'canceled';
    at: string;
    duration_seconds?: number;
    transcript?: Array<{ role: 'agent' | 'contact'; text: string }>;
    /** Final states of calls the built-in voice agent carries: why it ended, and a short machine reason. */
    outcome?: 'completed' | 'voicemail' | 'transferred' | 'no_answer' | 'busy' | 'refused' | 'provider_error' | 'instance_stopped' | 'max_duration';
    reason?: string;
  };
  /** One line of a live call's transcript (the built-in voice agent), as it is said. */
  call_transcript: { session_id: string; role: 'agent' | 'caller'; text: string; at: string };
}

/** The payload of one or several event types. */
export type PayloadOf<E extends EventType> = EventPayloads[E];
