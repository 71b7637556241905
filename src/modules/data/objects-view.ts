// How an object row is shown: over HTTP (hex ciphertext, camelCase) and in
// the object_created event (spec 6 field names).
import type { NewEvent } from '../events/recorder.js';
import { iso } from '../../lib/time.js';
import { hex } from './encoding.js';
import type { ObjectKind, ObjectsTable } from './tables.js';

export interface ObjectMetadata {
  /** Ciphertext length in bytes. */
  size: number;
  /** root, store (one of the eight store containers) or object. */
  kind: ObjectKind;
  /** The store's name, on store containers only. */
  store?: string;
}

export interface ObjectView {
  id: string;
  keyId: string | null;
  relatedId: string | null;
  content: string;
  auth_tag: string;
  iv: string | null;
  version: number;
  metadata: ObjectMetadata;
  createdAt: string;
  updatedAt: string;
}

export function metadataOf(row: ObjectsTable): ObjectMetadata {
  const metadata: ObjectMetadata = { size: row.content.length, kind: row.kind };
  if (row.store) metadata.store = row.store;
  return metadata;
}

export function toObjectView(row: ObjectsTable): ObjectView {
  const createdAt = iso(row.created_at);
  return {
    id: row.id,
    keyId: row.key_id,
    relatedId: row.related_id,
    content: hex(row.content)!,
    auth_tag: hex(row.auth_tag)!,
    iv: hex(row.iv),
    version: Number(row.version),
    metadata: metadataOf(row),
    createdAt,
    // Equal until the first update: format once (it shows in read profiles).
    updatedAt: row.updated_at === row.created_at ? createdAt : iso(row.updated_at),
  };
}

/**
 * The JSON of an object answer, as bytes, exactly as the routes' response
 * schema (ObjectResponse, through fast-json-stringify) writes it: the same
 * fields in the same order. Two costs of the schema's way are left out:
 * - fast-json-stringify scans every string for characters to escape (a
 *   regexp over the 2 KB hex of a 1 KiB ciphertext, and a schema check per
 *   nullable field). The hex fields come from Buffer#toString('hex') and
 *   have none; every other string goes through JSON.stringify, which escapes
 *   as fast-json-stringify does.
 * - A string answer is copied twice more on its way out (flattened to count
 *   its bytes for Content-Length, then joined to the header block by
 *   node:http), about 5 KB of young garbage per answer. Bytes go out as they
 *   are, the header block beside them.
 * test/modules/data/object-view-json.test.ts compares the two.
 */
export function objectViewBody(view: ObjectView): Buffer {
  const m = view.metadata;
  const store = m.store === undefined ? '' : `,"store":${JSON.stringify(m.store)}`;
  const head = `{"id":${JSON.stringify(view.id)},"keyId":${JSON.stringify(view.keyId)},"relatedId":${JSON.stringify(view.relatedId)},"content":"`;
  const tail =
    `","auth_tag":"${view.auth_tag}","iv":${view.iv === null ? 'null' : `"${view.iv}"`}` +
    `,"version":${view.version},"metadata":{"size":${m.size},"kind":${JSON.stringify(m.kind)}${store}}` +
    `,"createdAt":${JSON.stringify(view.createdAt)},"updatedAt":${JSON.stringify(view.updatedAt)}}`;
  const headBytes = Buffer.byteLength(head);
  // The hex is ASCII: one byte a character.
  const body = Buffer.allocUnsafe(headBytes + view.content.length + Buffer.byteLength(tail));
  body.write(head, 0);
  body.write(view.content, headBytes, 'latin1');
  const end = headBytes + view.content.length + body.write(tail, headBytes + view.content.length);
  // Every byte was written (the lengths above are the bytes write() puts there); never send what the pool held before.
  if (end !== body.length) throw new Error(`object answer: wrote ${end} of ${body.length} bytes`);
  return body;
}

/**
 * object_created: spec fields, plus `iv` (hex or null) without which the
 * content cannot be decrypted. Pass the row's view when there is one, so the
 * ciphertext is hex-encoded once.
 */
export function objectCreatedEvent(row: ObjectsTable, view: ObjectView = toObjectView(row)): NewEvent {
  const payload: Record<string, unknown> = { id: view.id, key_id: view.keyId };
  if (view.relatedId !== null) payload.related_object_id = view.relatedId;
  Object.assign(payload, { content: view.content, auth_tag: view.auth_tag, iv: view.iv, metadata: view.metadata });
  return { userId: row.user_id, type: 'object_created', payload, payloadJson: objectCreatedJson(view) };
}

/**
 * JSON.stringify of the object_created payload above, written without it:
 * the ciphertext is hex (made by Buffer#toString('hex'), so nothing to
 * escape), and JSON.stringify of a 2 KB string builds it in growing chunks
 * (about 6 KB of garbage and a third of the event insert's CPU per create).
 * The short strings a client chose (key id, parent id, store name) still go
 * through JSON.stringify. test/modules/data/object-view-json.test.ts holds it
 * to JSON.stringify's text.
 */
function objectCreatedJson(view: ObjectView): string {
  const related = view.relatedId === null ? '' : `,"related_object_id":${JSON.stringify(view.relatedId)}`;
  const iv = view.iv === null ? 'null' : `"${view.iv}"`;
  const m = view.metadata;
  const store = m.store === undefined ? '' : `,"store":${JSON.stringify(m.store)}`;
  return (
    `{"id":${JSON.stringify(view.id)},"key_id":${JSON.stringify(view.keyId)}${related},"content":"${view.content}","auth_tag":"${view.auth_tag}","iv":${iv}` +
    `,"metadata":{"size":${JSON.stringify(m.size)},"kind":${JSON.stringify(m.kind)}${store}}}`
  );
}

export const objectUpdatedEvent = (
  userId: string,
  row: { id: string; key_id: string | null; version: number },
  updatedAt: number,
): NewEvent => ({
  userId,
  type: 'object_updated',
  payload: { object_id: row.id, key_id: row.key_id, updated_at: iso(updatedAt), version: Number(row.version) },
});
