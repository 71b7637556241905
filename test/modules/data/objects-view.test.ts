import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { objectCreatedEvent } from '../../../src/modules/data/objects-view.js';
import type { ObjectsTable } from '../../../src/modules/data/tables.js';

const row = (overrides: Partial<ObjectsTable>): ObjectsTable => ({
  id: '019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e07',
  user_id: 'u1',
  key_id: '019ab3f0-0000-7a51-9d1e-2f6c8b1a4e07',
  related_id: null,
  kind: 'object',
  store: null,
  content: randomBytes(1024),
  auth_tag: randomBytes(16),
  iv: randomBytes(12),
  version: 1,
  created_at: 1_764_000_000_000,
  updated_at: 1_764_000_000_000,
  ...overrides,
});

describe('object_created', () => {
  it.each([
    ['an object with a parent and an iv', row({ related_id: '019ab3f0-1111-7a51-9d1e-2f6c8b1a4e07' })],
    ['an object without parent or iv', row({ iv: null })],
    ['a store container', row({ kind: 'store', store: 'calls', related_id: '019ab3f0-2222-7a51-9d1e-2f6c8b1a4e07' })],
    ['an object without key', row({ key_id: null, content: Buffer.alloc(0) })],
    ['a recording-sized object', row({ content: randomBytes(1_000_000) })],
  ])('stores exactly the JSON of its payload: %s', (_name, r) => {
    const event = objectCreatedEvent(r);
    expect(event.json).toBe(JSON.stringify(event.payload));
    const payload = JSON.parse(event.json!) as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(['id', 'key_id', ...(r.related_id ? ['related_object_id'] : []), 'content', 'auth_tag', 'iv', 'metadata']);
    expect(payload.content).toBe(r.content.toString('hex'));
  });
});
