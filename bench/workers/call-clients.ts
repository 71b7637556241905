// The calls bench's clients, in their own process (as a subscriber and a
// webhook receiver would be): one live `call_status` stream per user, and a
// webhook receiver that verifies every signature. Arrival times are stamped
// here, so the server's latency is measured without the clients' own work
// competing for the server's event loop.
//
// Messages in: { type: 'start', origin, users: [{ id, token, secret }] } →
// { type: 'ready', receiverUrl }; { type: 'expect', events, hooks } → one
// { type: 'reached' } once that many call_status frames and verified
// deliveries have arrived in total; { type: 'report' } → { type: 'report', … }.
import { type IncomingMessage, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../../src/lib/standard-webhooks.js';

interface User {
  id: string;
  token: string;
  secret: string;
}

const latencies: number[] = [];
const byStatus = new Map<string, number[]>();
const perSession = new Map<string, string[]>();
const received = { verified: 0, refused: 0, callHooks: 0 };
const closers: Array<() => void> = [];
let target: { events: number; hooks: number } | null = null;

function checkTarget(): void {
  if (target && latencies.length >= target.events && received.verified >= target.hooks) {
    target = null;
    process.send!({ type: 'reached' });
  }
}

function subscribe(url: string, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } });
    req.on('error', reject);
    req.on('response', (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      closers.push(() => req.destroy());
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const arrivedAt = Date.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.includes(': connected')) resolve();
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (!data) continue;
          const payload = JSON.parse(data.slice(6)) as { at: string; status: string; session_id: string };
          const latency = arrivedAt - Date.parse(payload.at);
          latencies.push(latency);
          byStatus.set(payload.status, [...(byStatus.get(payload.status) ?? []), latency]);
          perSession.set(payload.session_id, [...(perSession.get(payload.session_id) ?? []), payload.status]);
          checkTarget();
        }
      });
    });
    req.end();
  });
}

async function start(origin: string, users: User[]): Promise<string> {
  const secrets = new Map(users.map((u) => [u.id, u.secret]));
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const userId = (req.url ?? '').split('/')[2] ?? '';
      try {
        verifyWebhook(secrets.get(userId) ?? '', req.headers, Buffer.concat(chunks), Date.now());
        received.verified++;
        if (!(req.url ?? '').endsWith('/burst')) received.callHooks++;
      } catch {
        received.refused++;
      }
      res.writeHead(204).end();
      checkTarget();
    });
  });
  closers.push(() => receiver.close());
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  await Promise.all(users.map((u) => subscribe(`${origin}/api/events/call_status`, u.token)));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}

process.on('message', (msg: { type: string; origin?: string; users?: User[]; events?: number; hooks?: number }) => {
  if (msg.type === 'start') {
    start(msg.origin!, msg.users!).then(
      (receiverUrl) => process.send!({ type: 'ready', receiverUrl }),
      (err: Error) => process.send!({ type: 'error', error: err.message }),
    );
  } else if (msg.type === 'expect') {
    target = { events: msg.events!, hooks: msg.hooks! };
    checkTarget();
  } else if (msg.type === 'report') {
    process.send!({
      type: 'report',
      latencies,
      byStatus: Object.fromEntries(byStatus),
      perSession: Object.fromEntries(perSession),
      received,
    });
  } else if (msg.type === 'stop') {
    for (const close of closers) close();
    process.disconnect();
  }
});
