// Event subscriptions against the real stream: a store's object_created
// arrives and decrypts; a connection cut on the server side (as a network
// failure would) is resumed with Last-Event-ID, with nothing missed or doubled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventPayloads, WorkspaceClient, type WorkspaceEvent } from '../../sdk/src/index.js';
import { type ListeningApp, startServer, verifiedClient, within } from './support.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Waits until `events` holds n items. */
async function untilCount(events: unknown[], n: number, what: string) {
  await within(
    (async () => {
      while (events.length < n) await new Promise((r) => setTimeout(r, 10));
    })(),
    10_000,
    what,
  );
}

describe('event subscriptions', () => {
  it("delivers a store's object_created with a payload the SDK decrypts, and only that store's", async () => {
    const { client } = await verifiedClient(server);
    const contacts = client.store<{ name: string }>('contacts');
    const sub = await contacts.subscribe();
    await within(sub.ready, 5000, 'the stream to open');

    await client.store('agents').create({ name: 'not a contact' });
    const created = await contacts.create({ name: 'Grace Hopper' });
    const iterator = sub[Symbol.asyncIterator]();
    const { value: event } = await within(iterator.next(), 10_000, 'object_created');
    await sub.close();

    expect(event!.type).toBe('object_created');
    expect(Number(event!.id)).toBeGreaterThan(0);
    // The payload has exactly the fields the SDK's EventPayloads type names.
    const expected: Array<keyof EventPayloads['object_created']> = [
      'id',
      'key_id',
      'related_object_id',
      'content',
      'auth_tag',
      'iv',
      'metadata',
    ];
    expect(Object.keys(event!.data).sort()).toEqual([...expected].sort());
    expect(event!.data).toMatchObject({ id: created.id, related_object_id: (await contacts.describe()).id });
    expect(await contacts.openEvent(event!)).toEqual({ id: created.id, value: { name: 'Grace Hopper' } });
  });

  it('subscribes to several types or all; payload fields match the SDK event types', async () => {
    const { client } = await verifiedClient(server);
    await client.root(); // its creation (store keys and containers) is not what this test watches
    const seen: WorkspaceEvent<unknown>[] = [];
    const sub = client.events.subscribe('all', { onEvent: (e) => seen.push(e) });
    const some = client.events.subscribe(['object_updated', 'object_deleted']);
    await within(Promise.all([sub.ready, some.ready]), 5000, 'the streams to open');

    const tasks = client.store('tasks');
    const record = await tasks.create({ title: 'write SDK' });
    await tasks.update(record.id, { title: 'write SDK', done: true });
    await tasks.delete(record.id);
    const keyId = (await client.keys.create({ server: (await client.servers.current()).current })).id;
    await client.keys.delete(keyId);

    await untilCount(seen, 5, 'five events');
    const someEvents = [];
    for await (const e of some) {
      someEvents.push(e);
      if (someEvents.length === 2) break;
    }
    await sub.close();
    expect(seen.map((e) => e.type)).toEqual([
      'object_created',
      'object_updated',
      'object_deleted',
      'key_created',
      'key_deleted',
    ]);
    expect(someEvents.map((e) => e.type)).toEqual(['object_updated', 'object_deleted']);
    const fields: Record<string, string[]> = {
      object_updated: ['object_id', 'key_id', 'updated_at'],
      object_deleted: ['object_id', 'deleted_at'],
      key_created: ['key_id', 'user_id', 'created_at'],
      key_deleted: ['key_id', 'user_id', 'deleted_at'],
    };
    for (const e of seen.slice(1))
      expect(Object.keys(e.data as object)).toEqual(expect.arrayContaining(fields[e.type]));
    expect(EVENT_TYPES).toEqual(expect.arrayContaining(seen.map((e) => e.type)));
  });

  it('with tickets (the browser default): each connection takes a new ticket, sends no credential, and resumes from ?lastEventId=', async () => {
    const { client } = await verifiedClient(server);
    const requests: Array<{ url: string; authorization: string | null }> = [];
    const recording = new WorkspaceClient({
      baseUrl: server.baseUrl,
      token: client.token,
      fetch: (url, init) => {
        requests.push({ url, authorization: new Headers(init.headers).get('authorization') });
        return fetch(url, init);
      },
    });
    const contacts = recording.store<{ n: number }>('contacts');
    const received: WorkspaceEvent<EventPayloads['object_created']>[] = [];
    const sub = await contacts.subscribe({ ticket: true, retryMs: 50, onEvent: (e) => received.push(e) });
    await within(sub.ready, 5000, 'the stream to open');
    const ids = [(await contacts.create({ n: 1 })).id];
    await untilCount(received, 1, 'the first event');
    for (const socket of server.streamSockets) socket.destroy();
    ids.push((await contacts.create({ n: 2 })).id);
    await untilCount(received, 2, 'the event written while disconnected');
    await sub.close();
    expect(received.map((e) => e.data.id)).toEqual(ids);

    const tickets = requests.filter((r) => r.url.endsWith('/api/events/ticket'));
    const streams = requests.filter((r) => r.url.includes('/api/events/object_created'));
    expect(tickets).toHaveLength(2);
    expect(tickets.every((r) => r.authorization === `Bearer ${client.token}`)).toBe(true);
    expect(streams).toHaveLength(2);
    expect(streams.every((r) => r.authorization === null && /[?&]ticket=/.test(r.url))).toBe(true);
    expect(new URL(streams[0].url).searchParams.get('lastEventId')).toBeNull();
    expect(new URL(streams[1].url).searchParams.get('lastEventId')).toBe(received[0].id);
    expect(new Set(streams.map((r) => new URL(r.url).searchParams.get('ticket'))).size).toBe(2);
  });

  it('resumes after the server side drops the connection: nothing missed, nothing doubled', async () => {
    const { client } = await verifiedClient(server);
    const contacts = client.store<{ n: number }>('contacts');
    const received: WorkspaceEvent<EventPayloads['object_created']>[] = [];
    const errors: unknown[] = [];
    const sub = await contacts.subscribe({
      retryMs: 50,
      onEvent: (e) => received.push(e),
      onError: (e) => errors.push(e),
    });
    await within(sub.ready, 5000, 'the stream to open');

    const ids: string[] = [];
    for (const n of [1, 2]) ids.push((await contacts.create({ n })).id);
    await untilCount(received, 2, 'the first two events');
    const resumeFrom = sub.lastEventId;

    // Cut the stream's socket on the server, then write while the client is away.
    expect(server.streamSockets.size).toBe(1);
    for (const socket of server.streamSockets) socket.destroy();
    for (const n of [3, 4]) ids.push((await contacts.create({ n })).id);
    await untilCount(received, 4, 'the events written while disconnected');
    expect(sub.connections).toBe(2);
    ids.push((await contacts.create({ n: 5 })).id);
    await untilCount(received, 5, 'a live event after the resume');

    // Give a doubled delivery time to show up before counting.
    await new Promise((r) => setTimeout(r, 300));
    await sub.close();
    expect(received.map((e) => e.data.id)).toEqual(ids);
    const eventIds = received.map((e) => Number(e.id));
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    expect(new Set(eventIds).size).toBe(5);
    expect(Number(resumeFrom)).toBe(eventIds[1]);
    expect(errors).toHaveLength(1);
    const values = await Promise.all(received.map(async (e) => (await contacts.openEvent(e)).value.n));
    expect(values).toEqual([1, 2, 3, 4, 5]);
  });

  it('resumes from a lastEventId handed to a new subscription (e.g. after a restart of the client)', async () => {
    const { client } = await verifiedClient(server);
    const contacts = client.store<{ n: number }>('contacts');
    const first = await contacts.subscribe();
    await within(first.ready, 5000, 'the stream to open');
    await contacts.create({ n: 1 });
    const iterator = first[Symbol.asyncIterator]();
    await within(iterator.next(), 10_000, 'the first event');
    const checkpoint = first.lastEventId;
    await first.close();

    await contacts.create({ n: 2 });
    await contacts.create({ n: 3 });
    const second = await contacts.subscribe({ lastEventId: checkpoint });
    const got: number[] = [];
    for await (const e of second) {
      got.push((await contacts.openEvent(e)).value.n);
      if (got.length === 2) break;
    }
    expect(got).toEqual([2, 3]);
  });

  it('ends with the service error when the credential is refused', async () => {
    const { client } = await verifiedClient(server);
    client.token = 'not-a-token';
    const sub = client.events.subscribe('object_created', { retryMs: 10 });
    await expect(sub.ready).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
    await expect(sub[Symbol.asyncIterator]().next()).rejects.toMatchObject({ status: 401 });
  });
});
