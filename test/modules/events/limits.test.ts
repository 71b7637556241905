// Stream limits and lifecycle: keep-alive, the per-user cap, slow clients,
// credential re-checks and shutdown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';
import { openSse } from '../../support/sse-client.js';
import { emit, eventually, originOf, sleep, stream } from './support.js';

const defaults = loadConfig({ NODE_ENV: 'test' }).events;
let t: TestApp;
beforeAll(async () => {
  // slowClientTimeoutMs: the "fast" client below reads in this same process, so under
  // load (the whole suite on a busy machine) it can take well over 500 ms to drain a
  // 2.5 MB burst and was then ended as slow too; 2 s keeps it clearly fast.
  t = await createTestApp({
    config: {
      events: {
        ...defaults,
        keepAliveMs: 100,
        maxStreamsPerUser: 2,
        maxBufferedBytes: 64 * 1024,
        slowClientTimeoutMs: 2000,
        reauthIntervalMs: 100,
      },
    },
  });
});
afterAll(() => t.close());

describe('event stream limits', () => {
  it('sends a keep-alive comment at the configured interval', async () => {
    const user = await createVerifiedUser(t);
    const sse = await stream(t, user.token, 'all');
    await sse.waitForComment('keep-alive', 2000);
    await sleep(350);
    expect(sse.comments.filter((c) => c === 'keep-alive').length).toBeGreaterThanOrEqual(3);
    sse.close();
  });

  it('answers 429 rate_limited past the per-user cap, and accepts again once a stream closes', async () => {
    const user = await createVerifiedUser(t);
    const other = await createVerifiedUser(t);
    const a = await stream(t, user.token, 'all');
    const b = await stream(t, user.token, 'publish');
    const refused = await stream(t, user.token, 'all');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('at most 2 event streams'),
    });
    const otherUser = await stream(t, other.token, 'all'); // the cap is per user
    expect(otherUser.status).toBe(200);

    a.close();
    await eventually(
      () => t.services.events.eventStreams.broker.subscriberCount(user.id) === 1,
      5000,
      'the closed stream to be released',
    );
    const again = await stream(t, user.token, 'all');
    expect(again.status).toBe(200);
    for (const s of [b, otherUser, again]) s.close();
  });

  it('counts a burst of simultaneous connects exactly against the cap', async () => {
    const user = await createVerifiedUser(t);
    const results = await Promise.all(Array.from({ length: 6 }, () => stream(t, user.token, 'all')));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    for (const r of results) r.close();
  });

  it('ends a client that stops reading once its backlog passes the limit; a fast client and the writer are unaffected', async () => {
    const user = await createVerifiedUser(t);
    const broker = t.services.events.eventStreams.broker;
    const fast = await stream(t, user.token, 'object_deleted');
    const slow = await stream(t, user.token, 'object_deleted');
    slow.pause();
    const big = 'x'.repeat(256 * 1024);
    const ids: number[] = [];
    // Write until the server gives up on the slow client (kernel buffers absorb the first few MB).
    for (let round = 0; round < 40 && broker.subscriberCount(user.id) === 2; round++) {
      const started = Date.now();
      ids.push(
        ...(await emit(
          t,
          user.id,
          Array.from(
            { length: 10 },
            (_, i) =>
              ['object_deleted', { object_id: `s${round}-${i}`, pad: big }] as [
                'object_deleted',
                Record<string, unknown>,
              ],
          ),
        )),
      );
      expect(Date.now() - started).toBeLessThan(2000); // writers never wait for readers
      await fast.waitForEvents(ids.length, 10_000);
      await sleep(100); // while the slow client's timeout runs, write at a moderate pace (each round is 2.5 MB of log)
    }
    await eventually(() => broker.subscriberCount(user.id) === 1, 10_000, 'the slow stream to be ended');

    const more = await emit(t, user.id, [['object_deleted', { object_id: 'after' }]]);
    ids.push(...more);
    await fast.waitForEvents(ids.length, 10_000);
    expect(fast.events.map((e) => Number(e.id))).toEqual(ids);
    expect(fast.isEnded()).toBe(false);

    slow.resume();
    await slow.ended;

    const got = slow.events.map((e) => Number(e.id));
    expect(got.length).toBeLessThan(ids.length);
    expect(got).toEqual(ids.slice(0, got.length));

    // It resumes where it stopped, and misses nothing.
    const resumed = await stream(t, user.token, 'object_deleted', {
      headers: { 'last-event-id': slow.lastEventId ?? '0' },
    });
    await resumed.waitForEvents(ids.length - got.length, 10_000);
    expect([...got, ...resumed.events.map((e) => Number(e.id))]).toEqual(ids);
    fast.close();
    resumed.close();
  });

  it('ends the stream when its API key is revoked', async () => {
    const user = await createVerifiedUser(t);
    const created = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(user.token),
      payload: { name: 'sse' },
    });
    const { id, key } = created.json();
    const sse = await stream(t, key, 'all');
    await sleep(250);
    expect(sse.isEnded()).toBe(false);
    const del = await t.app.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: bearer(user.token) });
    expect(del.statusCode).toBe(204);
    await sse.ended;
    expect(t.services.events.eventStreams.broker.subscriberCount(user.id)).toBe(0);
  });

  it('ends a stream opened with a ticket when the session that asked for the ticket ends', async () => {
    const user = await createVerifiedUser(t);
    const { ticket } = (
      await t.app.inject({ method: 'POST', url: '/api/events/ticket', headers: bearer(user.token) })
    ).json();
    const sse = await openSse(`${await originOf(t)}/api/events/all?ticket=${encodeURIComponent(ticket)}`);
    expect(sse.status).toBe(200);
    await sleep(250);
    expect(sse.isEnded()).toBe(false);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(user.token) })).statusCode,
    ).toBe(200);
    await sse.ended;
    expect(t.services.events.eventStreams.broker.subscriberCount(user.id)).toBe(0);
  });

  it('app.close() ends open streams instead of waiting for their clients', async () => {
    const other = await createTestApp();
    const user = await createVerifiedUser(other);
    const sse = await stream(other, user.token, 'all');
    await emit(other, user.id, [['object_deleted', { object_id: 'x' }]]);
    await sse.waitForEvents(1);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(3000);
    await sse.ended;
    expect(sse.isEnded()).toBe(true);
  });
});
