// A local HTTP server standing for a user's webhook endpoint (or a custom
// tool's): records every request (headers and raw body) and answers as the
// test decides (a status, a JSON body, a late answer, or no answer at all, to
// play a timeout).
import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this request was answered with (null: left hanging). */
  answered: number | null;
}

/** A full answer: a status with a JSON (or raw) body, sent after `delayMs`. */
export interface Answer {
  status: number;
  json?: unknown;
  body?: string;
  delayMs?: number;
}

/** How to answer one request: a status code, an Answer, or 'hang' (never answer). */
export type Responder = (request: ReceivedWebhook, index: number) => number | Answer | 'hang';

export async function startWebhookReceiver(respond: Responder = () => 204) {
  const received: ReceivedWebhook[] = [];
  let responder = respond;
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: ReceivedWebhook = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: null,
      };
      received.push(entry);
      const answer = responder(entry, received.length - 1);
      if (typeof answer === 'number') {
        entry.answered = answer;
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      } else if (answer !== 'hang') {
        const send = () => {
          if (res.destroyed) return;
          entry.answered = answer.status;
          const json = answer.json !== undefined;
          res
            .writeHead(answer.status, { 'content-type': json ? 'application/json' : 'text/plain' })
            .end(json ? JSON.stringify(answer.json) : (answer.body ?? ''));
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
        else send();
      }
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** Successfully answered requests (2xx). */
    delivered: () => received.filter((r) => r.answered !== null && r.answered >= 200 && r.answered < 300),
    setResponder(next: Responder) {
      responder = next;
    },
    /** Resolves when `predicate` holds over what was received; rejects after timeoutMs. */
    waitFor(predicate: (all: ReceivedWebhook[]) => boolean, timeoutMs = 10_000): Promise<void> {
      if (predicate(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${received.length} received)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
