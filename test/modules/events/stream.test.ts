// GET /api/events/{type} over real sockets: framing, headers, types, filters,
// isolation between users, replay with Last-Event-ID, guards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import { client, createKey, createObject } from '../data/support.js';
import { emit, eventually, sleep, stream } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('GET /api/events/{type}', () => {
  it('answers with SSE headers, a preamble and id/event/data frames', async () => {
    const user = await createVerifiedUser(t);
    const sse = await stream(t, user.token, 'object_deleted');
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(sse.headers['cache-control']).toBe('no-store');
    expect(sse.headers['x-accel-buffering']).toBe('no');
    expect(sse.headers.connection).toBe('keep-alive');
    expect(sse.headers['x-request-id']).toBeTruthy();
    await sse.waitForComment('connected');
    expect(sse.retry).toBe(2000);

    const payload = { object_id: '0193abcd', deleted_at: '2026-11-22T10:00:00.000Z' };
    const [id] = await emit(t, user.id, [['object_deleted', payload]]);
    const [event] = await sse.waitForEvents(1);
    expect(event).toEqual({ id: String(id), event: 'object_deleted', data: JSON.stringify(payload) });
    expect(JSON.parse(event.data)).toEqual(payload);
    sse.close();
  });

  it('sends only the type in the path; several comma-separated; `all` and `*` for every type', async () => {
    const user = await createVerifiedUser(t);
    const one = await stream(t, user.token, 'publish');
    const two = await stream(t, user.token, 'publish,unpublish');
    const all = await stream(t, user.token, 'all');
    const star = await stream(t, user.token, '*');
    await emit(t, user.id, [
      ['key_created', { key_id: 'k1', user_id: user.id, created_at: 'x' }],
      ['publish', { type: 'calls', related_id: 'r1', timestamp: 'x' }],
      ['unpublish', { type: 'calls', related_id: 'r1', timestamp: 'x' }],
    ]);
    await all.waitForEvents(3);
    await star.waitForEvents(3);
    await two.waitForEvents(2);
    await one.waitForEvents(1);
    await sleep(100);
    expect(one.events.map((e) => e.event)).toEqual(['publish']);
    expect(two.events.map((e) => e.event)).toEqual(['publish', 'unpublish']);
    expect(all.events.map((e) => e.event)).toEqual(['key_created', 'publish', 'unpublish']);
    expect(star.events.map((e) => e.event)).toEqual(['key_created', 'publish', 'unpublish']);
    for (const s of [one, two, all, star]) s.close();
  });

  it('answers 400 for an unknown type, naming the valid ones', async () => {
    const user = await createVerifiedUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/events/object_exploded', headers: bearer(user.token) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_input' });
    expect(res.json().message).toContain('object_created');
    const mixed = await t.app.inject({ method: 'GET', url: '/api/events/publish,nope', headers: bearer(user.token) });
    expect(mixed.statusCode).toBe(400);
  });

  it('filters on payload fields: exact, * wildcard anywhere, any of repeated values; a missing field never matches', async () => {
    const user = await createVerifiedUser(t);
    const calls = await stream(t, user.token, 'all?type=calls');
    const prefix = await stream(t, user.token, 'all?object_id=0193*');
    const infix = await stream(t, user.token, 'all?object_id=*ab*');
    const either = await stream(t, user.token, 'publish?type=calls&type=contacts');
    const both = await stream(t, user.token, 'publish?type=calls&related_id=r2');
    const present = await stream(t, user.token, 'all?related_object_id=*');
    const nested = await stream(t, user.token, 'object_created?metadata.store=tasks');
    await emit(t, user.id, [
      ['publish', { type: 'calls', related_id: 'r1', object_id: '0193ab', timestamp: 'x' }],
      ['publish', { type: 'contacts', related_id: 'r2', object_id: '0200ab', timestamp: 'x' }],
      ['publish', { type: 'calls', related_id: 'r2', timestamp: 'x' }],
      ['object_deleted', { object_id: '0193ff', deleted_at: 'x' }],
      [
        'object_created',
        { id: 'o1', key_id: 'k', related_object_id: 'p1', content: '', auth_tag: '', metadata: { store: 'tasks' } },
      ],
      [
        'object_created',
        { id: 'o2', key_id: 'k', related_object_id: null, content: '', auth_tag: '', metadata: { store: 'calls' } },
      ],
    ]);
    // A sentinel every stream lets through, so "nothing more arrived" is observed, not assumed.
    const everyone = {
      type: 'calls',
      related_id: 'r2',
      object_id: '0193abz',
      related_object_id: 'p',
      metadata: { store: 'tasks' },
    };
    await emit(t, user.id, [
      ['publish', everyone],
      ['object_created', everyone],
    ]);
    const seen = async (s: typeof calls, n: number) => (await s.waitForEvents(n)).map((e) => JSON.parse(e.data));
    expect((await seen(calls, 4)).map((p) => p.related_id)).toEqual(['r1', 'r2', 'r2', 'r2']);
    expect((await seen(prefix, 4)).map((p) => p.object_id)).toEqual(['0193ab', '0193ff', '0193abz', '0193abz']);
    expect((await seen(infix, 4)).map((p) => p.object_id)).toEqual(['0193ab', '0200ab', '0193abz', '0193abz']);
    expect((await seen(either, 4)).map((p) => p.type)).toEqual(['calls', 'contacts', 'calls', 'calls']);
    expect((await seen(both, 2)).map((p) => p.object_id)).toEqual([undefined, '0193abz']);
    expect((await seen(present, 3)).map((p) => p.related_object_id)).toEqual(['p1', 'p', 'p']);
    expect((await seen(nested, 2)).map((p) => p.id ?? p.type)).toEqual(['o1', 'calls']);
    await sleep(100);
    expect([calls, prefix, infix, either, both, present, nested].map((s) => s.events.length)).toEqual([
      4, 4, 4, 4, 2, 3, 2,
    ]);
    for (const s of [calls, prefix, infix, either, both, present, nested]) s.close();
  });

  it('never shows a user anything of another user', async () => {
    const alice = await createVerifiedUser(t);
    const bob = await createVerifiedUser(t);
    const aliceStream = await stream(t, alice.token, 'all');
    const bobStream = await stream(t, bob.token, 'all');
    const aliceIds = await emit(t, alice.id, [['object_deleted', { object_id: 'alice-1', deleted_at: 'x' }]]);
    const bobIds = await emit(t, bob.id, [['object_deleted', { object_id: 'bob-1', deleted_at: 'x' }]]);
    aliceIds.push(...(await emit(t, alice.id, [['object_deleted', { object_id: 'alice-2', deleted_at: 'x' }]])));
    await aliceStream.waitForEvents(2);
    await bobStream.waitForEvents(1);
    await sleep(100);
    expect(aliceStream.events.map((e) => Number(e.id))).toEqual(aliceIds);
    expect(bobStream.events.map((e) => Number(e.id))).toEqual(bobIds);
    expect(bobStream.events.map((e) => JSON.parse(e.data).object_id)).toEqual(['bob-1']);

    // Replay too: bob asking for everything after 0 gets his own events only.
    const replay = await stream(t, bob.token, 'all', { headers: { 'last-event-id': '0' } });
    await replay.waitForEvents(1);
    await sleep(100);
    expect(replay.events.map((e) => Number(e.id))).toEqual(bobIds);
    for (const s of [aliceStream, bobStream, replay]) s.close();
  });

  it('after a dropped connection, Last-Event-ID replays exactly what was missed, then continues live', async () => {
    const user = await createVerifiedUser(t);
    const del = (n: number): ['object_deleted', Record<string, unknown>] => [
      'object_deleted',
      { object_id: `o${n}`, deleted_at: 'x' },
    ];
    const first = await stream(t, user.token, 'object_deleted');
    const before = await emit(t, user.id, [del(1), del(2)]);
    await first.waitForEvents(2);
    first.close();
    await first.ended;

    const missed = await emit(t, user.id, [del(3), del(4), del(5)]);
    await emit(t, user.id, [['publish', { type: 'calls', related_id: 'r', timestamp: 'x' }]]); // another type: not replayed

    const second = await stream(t, user.token, 'object_deleted', { headers: { 'last-event-id': first.lastEventId! } });
    await second.waitForEvents(3);
    const live = await emit(t, user.id, [del(6)]);
    await second.waitForEvents(4);
    await sleep(100);
    expect(first.events.map((e) => Number(e.id))).toEqual(before);
    expect(second.events.map((e) => Number(e.id))).toEqual([...missed, ...live]);
    expect(second.events.map((e) => JSON.parse(e.data).object_id)).toEqual(['o3', 'o4', 'o5', 'o6']);
    second.close();
  });

  it('takes ?lastEventId= too; the Last-Event-ID header (what EventSource sends on reconnect) wins', async () => {
    const user = await createVerifiedUser(t);
    const ids = await emit(
      t,
      user.id,
      [1, 2, 3].map((n) => ['object_deleted', { object_id: `q${n}`, deleted_at: 'x' }] as const) as any,
    );
    const byQuery = await stream(t, user.token, `object_deleted?lastEventId=${ids[0]}`);
    await byQuery.waitForEvents(2);
    const both = await stream(t, user.token, `object_deleted?lastEventId=${ids[0]}`, {
      headers: { 'last-event-id': String(ids[1]) },
    });
    await both.waitForEvents(1);
    await sleep(100);
    expect(byQuery.events.map((e) => Number(e.id))).toEqual(ids.slice(1));
    expect(both.events.map((e) => Number(e.id))).toEqual(ids.slice(2));
    const bad = await t.app.inject({
      method: 'GET',
      url: '/api/events/all',
      headers: { ...bearer(user.token), 'last-event-id': 'yesterday' },
    });
    expect(bad.statusCode).toBe(400);
    for (const s of [byQuery, both]) s.close();
  });

  it('loses and repeats nothing when events are written during a long replay', async () => {
    const user = await createVerifiedUser(t);
    const batch = (from: number, n: number) =>
      Array.from(
        { length: n },
        (_, i) =>
          ['object_deleted', { object_id: `b${from + i}`, deleted_at: 'x' }] as [
            'object_deleted',
            Record<string, unknown>,
          ],
      );
    const [start] = await emit(t, user.id, batch(0, 1));
    await emit(t, user.id, batch(1, 449)); // more than two replay pages
    const sse = await stream(t, user.token, 'object_deleted', { headers: { 'last-event-id': String(start - 1) } });
    for (let i = 0; i < 15; i++) await emit(t, user.id, batch(450 + i * 10, 10)); // while the replay runs
    const all = await t.database.db
      .selectFrom('events')
      .select('id')
      .where('user_id', '=', user.id)
      .orderBy('id')
      .execute();
    await sse.waitForEvents(600, 10_000);
    await sleep(100);
    const got = sse.events.map((e) => Number(e.id));
    expect(got).toEqual(all.map((r) => Number(r.id)));
    expect(new Set(got).size).toBe(600);
    expect(sse.events.map((e) => JSON.parse(e.data).object_id)).toEqual(Array.from({ length: 600 }, (_, i) => `b${i}`));
    sse.close();
  });

  it('without Last-Event-ID starts at the present: earlier events are not sent', async () => {
    const user = await createVerifiedUser(t);
    await emit(t, user.id, [['object_deleted', { object_id: 'old', deleted_at: 'x' }]]);
    const sse = await stream(t, user.token, 'all');
    const [id] = await emit(t, user.id, [['object_deleted', { object_id: 'new', deleted_at: 'x' }]]);
    await sse.waitForEvents(1);
    await sleep(100);
    expect(sse.events.map((e) => Number(e.id))).toEqual([id]);
    sse.close();
  });

  it("treats a Last-Event-ID past the user's newest event (a reset log) as the present instead of staying silent", async () => {
    const user = await createVerifiedUser(t);
    const sse = await stream(t, user.token, 'all', { headers: { 'last-event-id': '999999999' } });
    const [id] = await emit(t, user.id, [['object_deleted', { object_id: 'fresh', deleted_at: 'x' }]]);
    expect((await sse.waitForEvents(1))[0].id).toBe(String(id));
    sse.close();
  });

  it('guards: 401 without or with a bad credential, 403 before phone verification; API keys work', async () => {
    const none = await t.app.inject({ method: 'GET', url: '/api/events/all' });
    expect(none.statusCode).toBe(401);
    expect(none.json().code).toBe('unauthenticated');
    const bad = await t.app.inject({ method: 'GET', url: '/api/events/all', headers: bearer('not-a-token') });
    expect(bad.statusCode).toBe(401);
    const unverified = await registerUser(t);
    const res = await t.app.inject({ method: 'GET', url: '/api/events/all', headers: bearer(unverified.token) });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('phone_not_verified');

    const user = await createVerifiedUser(t);
    const { key } = (
      await t.app.inject({ method: 'PUT', url: '/api/api-keys', headers: bearer(user.token), payload: { name: 'sse' } })
    ).json();
    const sse = await stream(t, key, 'all');
    expect(sse.status).toBe(200);
    const [id] = await emit(t, user.id, [['object_deleted', { object_id: 'k', deleted_at: 'x' }]]);
    expect((await sse.waitForEvents(1))[0].id).toBe(String(id));
    sse.close();
  });

  it('closes the subscription when the client goes away', async () => {
    const user = await createVerifiedUser(t);
    const broker = t.services.events.eventStreams.broker;
    const sse = await stream(t, user.token, 'all');
    expect(broker.subscriberCount(user.id)).toBe(1);
    sse.close();
    await eventually(() => broker.subscriberCount(user.id) === 0, 5000, 'the subscription to end');
  });

  it('PUT /api/objects produces an object_created frame', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const keyId = await createKey(api);
    const sse = await stream(t, user.token, `object_created?key_id=${keyId}`);
    const object = await createObject(api, keyId);
    const [event] = await sse.waitForEvents(1);
    expect(event.event).toBe('object_created');
    expect(JSON.parse(event.data)).toMatchObject({ id: object.id, key_id: keyId });
    sse.close();
  });

  it('is documented in the OpenAPI document as a text/event-stream', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const op = doc.paths['/api/events/{type}'].get;
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/event-stream']);
    expect(op.responses['429']).toBeDefined();
  });
});
