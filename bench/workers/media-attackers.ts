// The attack bench's attackers, in their own process (bench/attack.ts), so
// that their work is not on the event loop that times the victim's requests.
// Everything goes to 127.0.0.1 only.
//
// { type: 'strangers', url, sockets, seconds, pauseMs } → { type: 'strangers-done', … }:
//   `sockets` loops, each connecting to the Twilio media route without any token and streaming garbage
//   (text that is not JSON, binary, oversized frames) until the server closes it, then reconnecting after `pauseMs`.
// { type: 'flood', id, url, speed } → { type: 'flood-done', id, … }:
//   one web call's socket sending 16 kHz PCM16 in 64 KB messages at `speed`× real time until the server closes it.
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';

type Job =
  | { type: 'strangers'; url: string; sockets: number; seconds: number; pauseMs: number }
  | { type: 'flood'; id: string; url: string; speed: number };

export interface StrangersResult {
  connections: number;
  /** Close codes the server answered with, and how many. */
  closes: Record<string, number>;
  messagesSent: number;
  bytesSent: number;
}

export interface FloodResult {
  /** Audio sent, in seconds (16 kHz PCM16). */
  audioSeconds: number;
  bytesSent: number;
  /** From open to the server's `ended` message (null: none came), in ms. */
  endedAfterMs: number | null;
  close: { code: number; reason: string };
  ended: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Garbage of a few kinds, as strangers send it: not JSON, binary, too big for the route. */
const GARBAGE: Array<[Buffer | string, boolean]> = [
  [randomBytes(4096).toString('latin1'), false],
  [randomBytes(4096), true],
  [randomBytes(60 * 1024), true],
  ['{"event":"connected"}'.repeat(180), false],
];

async function stranger(
  url: string,
  until: number,
  pauseMs: number,
  kind: number,
  result: StrangersResult,
): Promise<void> {
  while (Date.now() < until) {
    const ws = new WebSocket(url);
    result.connections++;
    ws.on('error', () => {});
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.once('open', () => {
      // A stream of garbage, as fast as the socket takes it, while it stays open.
      const [data, binary] = GARBAGE[kind % GARBAGE.length]!;
      const pump = () => {
        while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < 256 * 1024) {
          ws.send(data, { binary });
          result.messagesSent++;
          result.bytesSent += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
        }
        if (ws.readyState === WebSocket.OPEN) setTimeout(pump, 1);
      };
      pump();
    });
    const code = await Promise.race([closed, sleep(Math.max(0, until - Date.now()) + 2000).then(() => null)]);
    if (code === null) ws.terminate();
    const key = code === null ? 'still open at the end' : String(code);
    result.closes[key] = (result.closes[key] ?? 0) + 1;
    await sleep(pauseMs);
  }
}

async function strangers(job: Extract<Job, { type: 'strangers' }>): Promise<StrangersResult> {
  const result: StrangersResult = { connections: 0, closes: {}, messagesSent: 0, bytesSent: 0 };
  const until = Date.now() + job.seconds * 1000;
  await Promise.all(Array.from({ length: job.sockets }, (_, i) => stranger(job.url, until, job.pauseMs, i, result)));
  return result;
}

async function flood(job: Extract<Job, { type: 'flood' }>): Promise<FloodResult> {
  const message = randomBytes(640 * 100); // 2 s of 16 kHz PCM16 noise per 64 KB message
  const ws = new WebSocket(job.url);
  ws.on('error', () => {});
  let ended: string | null = null;
  let endedAt: number | null = null;
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    const m = JSON.parse(String(data)) as { type: string; reason?: string };
    if (m.type === 'ended') {
      ended = m.reason ?? '';
      endedAt = Date.now();
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const opened = Date.now();
  let bytesSent = 0;
  const intervalMs = 2000 / job.speed;
  for (let n = 1; ws.readyState === WebSocket.OPEN && ended === null; n++) {
    ws.send(message);
    bytesSent += message.length;
    const due = opened + n * intervalMs;
    if (due > Date.now()) await sleep(due - Date.now());
    else if (n % 10 === 0) await sleep(0);
  }
  const close = await closed;
  return {
    audioSeconds: bytesSent / 32_000,
    bytesSent,
    endedAfterMs: endedAt === null ? null : endedAt - opened,
    close,
    ended,
  };
}

process.on('message', (job: Job) => {
  if (job.type === 'strangers') {
    strangers(job).then(
      (result) => process.send!({ type: 'strangers-done', result }),
      (err) => process.send!({ type: 'error', error: String(err) }),
    );
  } else if (job.type === 'flood') {
    flood(job).then(
      (result) => process.send!({ type: 'flood-done', id: job.id, result }),
      (err) => process.send!({ type: 'flood-done', id: job.id, error: String(err) }),
    );
  }
});
