// SSE subscriber process: holds many event streams open, counts the
// object_created events each one receives and records write-to-receipt
// latency from the stamp the writer put in the ciphertext.
import { Agent, request } from 'node:http';
import { type Histogram, newHistogram, record } from '../lib/histogram.js';
import { readStamp } from '../lib/stamp.js';

export interface Subscriber {
  token: string;
}

interface Stream {
  index: number;
  buf: string;
  lastId: number;
  received: number;
  duplicates: number;
}

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const streams: Stream[] = [];
const sockets: { destroy(): void }[] = [];
let histogram: Histogram = newHistogram();
let unstamped = 0;
let closed = 0;
let cpuMark = process.cpuUsage();
let timeMark = performance.now();

function onFrame(stream: Stream, frame: string, now: bigint) {
  if (frame.startsWith(':') || !/^event: ?object_created$/m.test(frame)) return;
  const idMatch = /^id: ?(\d+)$/m.exec(frame);
  if (idMatch) {
    const id = Number(idMatch[1]);
    if (id <= stream.lastId) return void (stream.duplicates += 1);
    stream.lastId = id;
  }
  stream.received += 1;
  const at = frame.indexOf('"content":"');
  const stamp = at >= 0 ? readStamp(frame.slice(at + 11, at + 43)) : null;
  if (stamp === null) unstamped += 1;
  else record(histogram, Number(now - stamp) / 1000);
}

function open(port: number, path: string, sub: Subscriber, index: number): Promise<string | null> {
  return new Promise((resolve) => {
    const stream: Stream = { index, buf: '', lastId: 0, received: 0, duplicates: 0 };
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${sub.token}`, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(`${res.statusCode} ${body.slice(0, 200)}`));
        return;
      }
      streams.push(stream);
      sockets.push(req);
      res.on('data', (chunk: string) => {
        const now = process.hrtime.bigint();
        stream.buf += chunk;
        let end: number;
        while ((end = stream.buf.indexOf('\n\n')) >= 0) {
          onFrame(stream, stream.buf.slice(0, end), now);
          stream.buf = stream.buf.slice(end + 2);
        }
      });
      res.on('close', () => (closed += 1));
      resolve(null);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('connect timeout')));
    req.on('error', (err) => resolve(err.message));
    req.end();
  });
}

let subscriberCount = 0;

async function connectAll(port: number, path: string, subs: Subscriber[]) {
  subscriberCount = subs.length;
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < subs.length) {
      const index = next++;
      const failure = await open(port, path, subs[index], index);
      if (failure) failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: Math.min(100, subs.length) }, worker));
  return { ok: subs.length - failures.length, failed: failures.length, failures: failures.slice(0, 5) };
}

type Message = { type: 'connect'; port: number; path: string; subscribers: Subscriber[] } | { type: 'reset' } | { type: 'stats' } | { type: 'report' };

process.on('message', async (msg: Message) => {
  try {
    if (msg.type === 'connect') {
      const result = await connectAll(msg.port, msg.path, msg.subscribers);
      process.send!({ type: 'connected', ...result });
    } else if (msg.type === 'reset') {
      histogram = newHistogram();
      cpuMark = process.cpuUsage();
      timeMark = performance.now();
      process.send!({ type: 'reset' });
    } else if (msg.type === 'stats') {
      process.send!({ type: 'stats', received: streams.reduce((n, s) => n + s.received, 0), closed });
    } else if (msg.type === 'report') {
      const cpu = process.cpuUsage(cpuMark);
      const cpuPct = Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - timeMark)) * 100);
      // Per subscriber (in the order given): events received, -1 when its stream never opened.
      const counts = new Array<number>(subscriberCount).fill(-1);
      for (const s of streams) counts[s.index] = s.received;
      const report = { type: 'report', counts, duplicates: streams.reduce((n, s) => n + s.duplicates, 0), unstamped, closed, cpuPct, histogram };
      for (const socket of sockets) socket.destroy();
      process.send!(report, () => process.exit(0));
    }
  } catch (err) {
    process.send!({ type: 'error', error: String(err) });
  }
});
