// Object answers and the object_created payload are written as JSON text by
// hand (objects-view.ts): the answer must be byte for byte what the routes'
// response schema serializer (fast-json-stringify, as Fastify builds it)
// wrote, and the stored payload exactly JSON.stringify of the payload, for
// every shape an object row can take.
import { randomBytes } from 'node:crypto';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectCreatedEvent, objectViewBody, toObjectView } from '../../../src/modules/data/objects-view.js';
import { ObjectResponse } from '../../../src/modules/data/schemas.js';
import type { ObjectsTable } from '../../../src/modules/data/tables.js';
import { payloadText } from '../../../src/modules/events/recorder.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { client, createKey, createObject, sampleObject } from './support.js';

const row = (over: Partial<ObjectsTable>): ObjectsTable => ({
  id: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  user_id: 'user-1',
  key_id: 'key-1',
  related_id: null,
  kind: 'object',
  store: null,
  content: randomBytes(1024),
  auth_tag: randomBytes(16),
  iv: null,
  version: 1,
  created_at: 1_764_000_000_123,
  updated_at: 1_764_000_000_123,
  ...over,
});

const shapes: Array<[string, Partial<ObjectsTable>]> = [
  ['a plain object', {}],
  ['a child with an iv', { related_id: 'parent-1', iv: randomBytes(12) }],
  ['empty ciphertext', { content: Buffer.alloc(0), auth_tag: Buffer.alloc(0) }],
  ['a store container', { kind: 'store', store: 'tasks', related_id: 'root-1' }],
  ['the root container (no key)', { kind: 'root', key_id: null }],
  [
    'ids a client chose with characters JSON escapes',
    { key_id: 'k"\\\u0000\u001f\u2028é😀\ud800', related_id: '</script>"\n' },
  ],
  ['a store name with a quote', { kind: 'store', store: 'a"b' }],
  ['an updated object (version 7, later updatedAt)', { version: 7, updated_at: 1_764_000_999_000 }],
  [
    'a version read back as a string (PostgreSQL bigint)',
    { version: '3' as unknown as number, created_at: '1764000000123' as unknown as number },
  ],
];

/** What Fastify answered with before: the route's 200 schema compiled by fast-json-stringify. */
const schemaSerializer = SerializerSelector()({}, {})({
  schema: Type.Object(ObjectResponse.properties, { headers: { etag: Type.String() } }),
  method: 'GET',
  url: '/api/objects/:id',
  httpStatus: '200',
}) as (doc: unknown) => string;

describe('object answer text', () => {
  for (const [name, over] of shapes) {
    it(`is what the response schema's serializer writes: ${name}`, () => {
      const view = toObjectView(row(over));
      expect(objectViewBody(view).toString('utf8')).toBe(schemaSerializer(view));
    });
  }
});

describe('object_created payload text', () => {
  for (const [name, over] of shapes) {
    it(`is JSON.stringify of the payload: ${name}`, () => {
      const event = objectCreatedEvent(row(over));
      expect(event.payloadJson).toBeDefined();
      expect(event.payloadJson).toBe(JSON.stringify(event.payload));
      expect(payloadText(event)).toBe(JSON.stringify(event.payload));
      expect(JSON.parse(event.payloadJson!)).toEqual(event.payload);
    });
  }

  it('holds the spec fields in the order the events API has always written them', () => {
    const event = objectCreatedEvent(row({ related_id: 'p', iv: Buffer.from('000102030405060708090a0b', 'hex') }));
    expect(Object.keys(JSON.parse(event.payloadJson!))).toEqual([
      'id',
      'key_id',
      'related_object_id',
      'content',
      'auth_tag',
      'iv',
      'metadata',
    ]);
    expect(JSON.parse(event.payloadJson!).iv).toBe('000102030405060708090a0b');
  });
});

describe('object routes over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it("PUT, GET and PATCH answer JSON (utf-8) with the schema serializer's exact text and the ETag", async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const parent = await createObject(api, keyId);
    const answers = [await api.put('/api/objects', sampleObject(keyId, { relatedId: parent.id }))];
    const { id } = answers[0].json();
    answers.push(await api.get(`/api/objects/${id}`));
    answers.push(await api.patch(`/api/objects/${id}`, sampleObject(keyId, { iv: null }), { 'if-match': '"1"' }));
    for (const [i, res] of answers.entries()) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.etag).toBe(i === 2 ? '"2"' : '"1"');
      expect(res.body).toBe(schemaSerializer(res.json()));
    }
    // HEAD (Fastify's route beside GET) counts the same bytes and sends none.
    const head = await t.app.inject({
      method: 'HEAD',
      url: `/api/objects/${id}`,
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength((await api.get(`/api/objects/${id}`)).body)));
    expect(head.body).toBe('');
    // Errors still answer through the error schema.
    const missing = await api.get('/api/objects/nope');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    expect(missing.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});
