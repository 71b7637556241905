// The replay/live boundary of one stream, made deterministic: a sink (our own
// StreamSink interface) stalls the replay at a chosen frame while new events
// are committed and delivered by the real broker, over a real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventConnection, type StreamSink } from '../../../src/modules/events/connection.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { emit, eventually } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A sink whose write holding the `stallAt`-th event frame reports a full buffer until release() is called. */
function stallingSink(stallAt: number) {
  const ids: number[] = [];
  let release!: () => void;
  const released = new Promise<boolean>((r) => (release = () => r(true)));
  let stalled = false;
  const sink: StreamSink = {
    write(chunk) {
      const found = [...chunk.toString().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      if (!found.length) return true;
      const before = ids.length;
      ids.push(...found);
      const stalls = before < stallAt && ids.length >= stallAt;
      if (stalls) stalled = true;
      return !stalls;
    },
    bufferedBytes: 0,
    closed: false,
    waitForDrain: () => released,
    end() {},
    onClose() {},
  };
  return { sink, ids, release, isStalled: () => stalled };
}

const deletions = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) => ['object_deleted', { object_id: `${tag}${i}` }] as ['object_deleted', Record<string, unknown>],
  );

async function openConnection(userId: string) {
  const broker = t.services.events.eventStreams.broker;
  await broker.ready();
  const delivery = t.services.events.eventStreams.delivery;
  // A small replay page, so the log replay takes several pages.
  const context = { ...delivery, options: { ...delivery.options, replayBatch: 200 } };
  const connection = new EventConnection(userId, { types: null, filters: [] }, 0, context, async () => true);
  connection.bindSubscription(broker.subscribe(connection));
  return connection;
}

describe('replay/live boundary', () => {
  it('sends an event once when it is both delivered live and read by a later replay page', async () => {
    const user = await createVerifiedUser(t);
    const before = await emit(t, user.id, deletions(250, 'a')); // two pages
    const connection = await openConnection(user.id);
    const { sink, ids, release, isStalled } = stallingSink(100); // stalls inside page one
    const attached = connection.attach(sink);
    await eventually(isStalled, 5000, 'the replay to stall');
    const during = await emit(t, user.id, deletions(5, 'b')); // live (held) AND in page two
    await eventually(() => t.services.events.eventStreams.broker.subscriberCount(user.id) === 1);
    await new Promise((r) => setTimeout(r, 100)); // let the broker hand them over
    release();
    await attached;
    const after = await emit(t, user.id, deletions(3, 'c'));
    await eventually(() => ids.length >= 258, 5000, 'all events');
    expect(ids).toEqual([...before, ...during, ...after]);
    connection.close('client');
  });

  it('sends events committed after the last replay page (held until the stream goes live)', async () => {
    const user = await createVerifiedUser(t);
    const before = await emit(t, user.id, deletions(150, 'a')); // one page: the last
    const connection = await openConnection(user.id);
    const { sink, ids, release, isStalled } = stallingSink(100);
    const attached = connection.attach(sink);
    await eventually(isStalled, 5000, 'the replay to stall');
    const during = await emit(t, user.id, deletions(5, 'b')); // after the last page was read
    await new Promise((r) => setTimeout(r, 100));
    release();
    await attached;
    await eventually(() => ids.length >= 155, 5000, 'all events');
    expect(ids).toEqual([...before, ...during]);
    connection.close('client');
  });
});
