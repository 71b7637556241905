// A small server-sent events client over node:http, for tests and benchmarks:
// parses frames as the EventSource spec does, records comments, and can stop
// reading (pause) to play a slow subscriber.
import { type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

export interface SseClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of a non-200 answer (JSON text), empty for a stream. */
  body: string;
  events: SseEvent[];
  comments: string[];
  retry: number | undefined;
  /** The id of the last event received (what EventSource would send as Last-Event-ID). */
  lastEventId: string | undefined;
  /** Resolves when the server ends or drops the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  /** Waits until `count` events have arrived in all; rejects after timeoutMs with what did arrive. */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  waitForComment(text: string, timeoutMs?: number): Promise<void>;
  /** Stops reading from the socket (the server's writes back up) / starts again. */
  pause(): void;
  resume(): void;
  close(): void;
}

export interface SseOptions {
  headers?: Record<string, string>;
  /** Give up on the response headers after this long. */
  timeoutMs?: number;
}

export function openSse(url: string, options: SseOptions = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...options.headers } });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no response from ${url} within ${options.timeoutMs ?? 5000} ms`));
    }, options.timeoutMs ?? 5000);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      clearTimeout(timer);
      const client = createClient(res);
      if (res.statusCode === 200) resolve(client);
      else void client.ended.then(() => resolve(client));
    });
    req.end();
  });
}

function createClient(res: IncomingMessage): SseClient {
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  let buffer = '';
  let pending: { event?: string; data: string[] } = { data: [] };
  /** The spec's "last event ID buffer": becomes lastEventId only when an event is complete. */
  let idBuffer: string | undefined;
  let ended = false;
  let endResolve!: () => void;
  const endedPromise = new Promise<void>((r) => (endResolve = r));
  const streaming = res.statusCode === 200 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream');

  const client: SseClient = {
    status: res.statusCode ?? 0,
    headers: res.headers,
    body: '',
    events: [],
    comments: [],
    retry: undefined,
    lastEventId: undefined,
    ended: endedPromise,
    isEnded: () => ended,
    waitForEvents: (count, timeoutMs = 5000) =>
      waitUntil(
        () => client.events.length >= count,
        timeoutMs,
        () => `${client.events.length} of ${count} events`,
      ).then(() => client.events.slice(0, count)),
    waitForComment: (text, timeoutMs = 5000) =>
      waitUntil(
        () => client.comments.includes(text),
        timeoutMs,
        () => `comment "${text}" (got ${JSON.stringify(client.comments)})`,
      ),
    pause: () => res.pause(),
    resume: () => res.resume(),
    close: () => res.destroy(),
  };

  function waitUntil(done: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (done()) {
          finish();
          resolve();
        } else if (ended) {
          finish();
          reject(new Error(`stream ended before ${describe()}`));
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out waiting for ${describe()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  }

  function processLine(line: string) {
    if (line === '') {
      client.lastEventId = idBuffer;
      if (pending.data.length > 0)
        client.events.push({ id: idBuffer, event: pending.event ?? 'message', data: pending.data.join('\n') });
      pending = { data: [] };
      return;
    }
    if (line.startsWith(':')) {
      client.comments.push(line.slice(1).trimStart());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') pending.data.push(value);
    else if (field === 'event') pending.event = value;
    else if (field === 'id' && !value.includes('\0')) idBuffer = value;
    else if (field === 'retry' && /^\d+$/.test(value)) client.retry = Number(value);
  }

  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    if (!streaming) {
      client.body += chunk;
      return;
    }
    buffer += chunk;
    let index: number;
    while ((index = buffer.search(/\r\n|\r|\n/)) !== -1) {
      if (index === buffer.length - 1 && buffer.endsWith('\r')) break; // maybe half of \r\n
      const line = buffer.slice(0, index);
      buffer = buffer.slice(index + (buffer.startsWith('\r\n', index) ? 2 : 1));
      processLine(line);
    }
    notify();
  });
  const finish = () => {
    if (ended) return;
    ended = true;
    endResolve();
    notify();
  };
  res.on('end', finish);
  res.on('close', finish);
  res.on('error', finish);
  return client;
}
