// EventSubscription against a small local SSE server whose behaviour each test
// scripts: reconnection with Last-Event-ID, server-set retry, frames cut by a
// dropped connection, fatal answers and close(). The same client against the
// real event stream is in events.test.ts.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpCore, type WorkspaceEvent, WorkspaceApiError } from '../../sdk/src/index.js';
import { EventSubscription } from '../../sdk/src/events.js';

type Handler = (req: IncomingMessage, res: ServerResponse, connection: number) => void;

const servers: Array<{ close: () => Promise<void> }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function sseServer(handler: Handler) {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, requests.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/events/all`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  servers.push({ close });
  return { url, requests };
}

function openStream(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  res.flushHeaders();
}

const frame = (id: number, data: unknown, event = 'object_created') =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

async function take<T>(sub: EventSubscription<T>, n: number): Promise<WorkspaceEvent<T>[]> {
  const out: WorkspaceEvent<T>[] = [];
  for await (const event of sub) {
    out.push(event);
    if (out.length === n) break;
  }
  return out;
}

describe('EventSubscription', () => {
  it('resumes after a dropped connection from the last delivered id, without gaps or repeats', async () => {
    const log = Array.from({ length: 6 }, (_, i) => ({ id: i + 1, n: i + 1 }));
    const { url, requests } = await sseServer((req, res, connection) => {
      openStream(res);
      const after = Number(req.headers['last-event-id'] ?? 0);
      const pending = log.filter((e) => e.id > after);
      if (connection === 1) {
        // Two whole frames, then half of the third, then the connection drops.
        res.write(frame(pending[0].id, pending[0]) + frame(pending[1].id, pending[1]));
        res.write(frame(pending[2].id, pending[2]).slice(0, 12));
        setTimeout(() => res.destroy(), 20);
      } else {
        for (const e of pending) res.write(frame(e.id, e));
      }
    });
    const errors: unknown[] = [];
    const sub = new EventSubscription<{ n: number }>(new HttpCore({ baseUrl: 'http://unused', token: 'tok' }), url, {
      retryMs: 10,
      onError: (e) => errors.push(e),
    });
    const events = await take(sub, 6);
    expect(events.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '2']);
    expect(requests[0].headers.authorization).toBe('Bearer tok');
    expect(requests[0].headers.accept).toBe('text/event-stream');
    expect(errors).toHaveLength(1);
    expect(sub.connections).toBe(2);
    expect(sub.lastEventId).toBe('6');
  });

  it('sends the lastEventId it was given on the first connection, and honours retry: from the server when no retryMs is set', async () => {
    const opened: number[] = [];
    const { url, requests } = await sseServer((_req, res, connection) => {
      opened.push(Date.now());
      openStream(res);
      if (connection === 1) {
        res.end(`retry: 300\n${frame(11, { n: 11 })}`);
      } else {
        res.write(frame(12, { n: 12 }));
      }
    });
    const sub = new EventSubscription<{ n: number }>(new HttpCore({ baseUrl: 'http://unused' }), url, {
      lastEventId: '10',
    });
    const events = await take(sub, 2);
    expect(events.map((e) => e.data.n)).toEqual([11, 12]);
    expect(requests.map((r) => r.headers['last-event-id'])).toEqual(['10', '11']);
    expect(opened[1] - opened[0]).toBeGreaterThanOrEqual(280);
  });

  it('decodes UTF-8 split between chunks and delivers to onEvent as well as the iterator', async () => {
    const payload = JSON.stringify({ name: 'Zoë 🚀' });
    const bytes = Buffer.from(`id: 1\nevent: x\ndata: ${payload}\n\n`);
    const { url } = await sseServer((_req, res) => {
      openStream(res);
      const cut = bytes.indexOf(0xf0) + 2; // inside the 4-byte emoji
      res.write(bytes.subarray(0, cut));
      setTimeout(() => res.write(bytes.subarray(cut)), 20);
    });
    const seen: WorkspaceEvent<{ name: string }>[] = [];
    const sub = new EventSubscription<{ name: string }>(new HttpCore({ baseUrl: 'http://unused' }), url, {
      onEvent: (e) => seen.push(e),
    });
    const [event] = await take(sub, 1);
    expect(event).toEqual({ id: '1', type: 'x', data: { name: 'Zoë 🚀' } });
    expect(seen).toEqual([event]);
  });

  it('retries a 503 with backoff but ends with WorkspaceApiError on 401', async () => {
    const { url, requests } = await sseServer((_req, res, connection) => {
      if (connection === 1) {
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'busy', code: 'unavailable' }));
      } else {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'no', code: 'unauthenticated' }));
      }
    });
    const errors: unknown[] = [];
    const sub = new EventSubscription(new HttpCore({ baseUrl: 'http://unused' }), url, {
      retryMs: 5,
      onError: (e) => errors.push(e),
    });
    await expect(sub.ready).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
    await expect(take(sub, 1)).rejects.toBeInstanceOf(WorkspaceApiError);
    expect(requests).toHaveLength(2);
    expect(errors).toEqual([expect.objectContaining({ status: 503, code: 'unavailable' })]);
  });

  it('close() ends the iterator and the connection, and nothing reconnects afterwards', async () => {
    let closedByClient = false;
    const { url, requests } = await sseServer((req, res) => {
      openStream(res);
      res.write(': hello\n\n');
      req.on('close', () => (closedByClient = true));
    });
    const sub = new EventSubscription(new HttpCore({ baseUrl: 'http://unused' }), url, { retryMs: 5 });
    await sub.ready;
    const pending = take(sub, 1);
    await sub.close();
    expect(await pending).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(closedByClient).toBe(true);
    expect(requests).toHaveLength(1);
  });

  it('reconnect() drops the connection and resumes at once', async () => {
    const { url, requests } = await sseServer((req, res) => {
      openStream(res);
      const after = Number(req.headers['last-event-id'] ?? 0);
      res.write(frame(after + 1, { n: after + 1 }));
    });
    const sub = new EventSubscription<{ n: number }>(new HttpCore({ baseUrl: 'http://unused' }), url, {
      retryMs: 60_000,
    });
    const iterator = sub[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.data.n).toBe(1);
    sub.reconnect();
    expect((await iterator.next()).value?.data.n).toBe(2);
    expect(requests.map((r) => r.headers['last-event-id'])).toEqual([undefined, '1']);
    await sub.close();
  });
});
