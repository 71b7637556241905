// Helpers for the event-stream tests: a listening app, stream URLs and events
// recorded the way the data plane records them (record in a transaction, then announce).
import type { AddressInfo } from 'node:net';
import type { EventType } from '../../../src/modules/events/recorder.js';
import type { StreamSink } from '../../../src/modules/events/connection.js';
import { Frames } from '../../../src/modules/events/stream-event.js';
import type { TestApp } from '../../support/app.js';
import { bearer } from '../../support/factories.js';
import { type SseOptions, openSse } from '../../support/sse-client.js';

/** Starts a real socket for the app (once) and returns its origin. */
export async function originOf(t: TestApp): Promise<string> {
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

export async function stream(t: TestApp, token: string, path: string, options: SseOptions = {}) {
  return openSse(`${await originOf(t)}/api/events/${path}`, {
    ...options,
    headers: { ...bearer(token), ...options.headers },
  });
}

/** Records events of one user in one transaction and announces them; returns their ids. */
export async function emit(
  t: TestApp,
  userId: string,
  events: Array<[EventType, Record<string, unknown>]>,
): Promise<number[]> {
  await t.database.db.transaction().execute((trx) =>
    t.services.events.eventRecorder.record(
      trx,
      events.map(([type, payload]) => ({ userId, type, payload })),
    ),
  );
  t.services.events.eventRecorder.announce();
  const rows = await t.database.db
    .selectFrom('events')
    .select('id')
    .where('user_id', '=', userId)
    .orderBy('id', 'desc')
    .limit(events.length)
    .execute();
  return rows.map((r) => Number(r.id)).reverse();
}

/** Waits until the predicate holds (state the test cannot await directly, e.g. a server-side close). */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sink with a backlog the test sets; it records every write. */
export function memorySink() {
  const writes: Frames[] = [];
  let buffered = 0;
  let waiters: Array<(ok: boolean) => void> = [];
  const sink: StreamSink = {
    write(data) {
      writes.push(typeof data === 'string' ? Frames.text(data) : data);
      return buffered === 0;
    },
    get bufferedBytes() {
      return buffered;
    },
    closed: false,
    waitForDrain: () => (buffered === 0 ? Promise.resolve(true) : new Promise((resolve) => waiters.push(resolve))),
    end() {},
    onClose() {},
  };
  return {
    sink,
    writes,
    /** Event ids in the order written. */
    ids: () => writes.flatMap((w) => [...w.toString().matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))),
    /** Writes that carried event frames. */
    eventWrites: () => writes.filter((w) => w.toString().startsWith('id: ')),
    setBacklog(bytes: number) {
      buffered = bytes;
      if (bytes === 0) {
        for (const w of waiters) w(true);
        waiters = [];
      }
    },
  };
}
