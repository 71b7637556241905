// The streams floor: the least a Node server can do for one user's many event
// streams on this machine (issue 26). Plain node:http, no auth, no database,
// no events table, no broker: PUT /api/objects takes the writer's object,
// hex-encodes its ciphertext into the same object_created frame the real
// server sends (`id: N\nevent: object_created\ndata: {...}\n\n`, ~2.3 KB for
// 1 KiB of ciphertext, the send time inside it), and answers. The frames go to
// every open GET /api/events/object_created in rounds: each round joins the
// frames pending since the last one into one HTTP chunk (one Buffer) and writes
// it to every socket, one write per socket per round, straight to the socket as
// the real server does. A round starts as soon as the event loop is free after
// an event arrives and the next one right after it when more arrived meanwhile
// (no coalescing window). A round yields to the event loop every
// FLOOR_SLICE_MS (10; the real scheduler's are 5) so the writer's PUTs are
// answered meanwhile; 0 writes each round in one go, which starves them: with
// 5,000 streams a round is 100–450 ms of writes, a PUT needs a few turns of the
// loop, and in two runs 63 and 189 of 500 PUTs were unanswered 15 s after the
// last (p99 of delivery 22–43 s, since the send time is taken before the PUT).
// 30 and 100 ms slices were no better than 10 ms in delivery and worse for the
// PUTs (bench/ANALYSIS.md, "The streams floor"), and 5 ms gave it
// p99 155-167 ms against 144-147 with 10 in alternating runs (27 Nov). Its
// PUTs answer at once, so one turn of the loop per yield is all they need
// (the server yields two: its commits wait for the end of a turn).
//
// GET /floor/log?after=N answers what the orchestrator's log reader answers for
// the real server (LogCounts): the events after id N, their count and id sum.
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const SLICE_MS = Number(process.env.FLOOR_SLICE_MS ?? 10);

const streams = new Set<Socket>();
let pending: Buffer[] = [];
let lastId = 0;
let roundScheduled = false;
let round: { chunk: Buffer; sockets: Socket[]; at: number; events: number; cpuUs: number; writes: number } | null =
  null;
/** Each round's CPU time (user + system, µs) with its size: what one write costs, by bytes (for the quiet-machine estimate). */
const roundLog: { events: number; bytes: number; writes: number; cpuUs: number }[] = [];
/** writesQueued: writes the kernel did not take whole (the rest waits in Node's queue for the socket to drain). */
const stats = { rounds: 0, writes: 0, writesQueued: 0, events: 0, roundMsTotal: 0, roundMsMax: 0 };

function chunkOf(frames: Buffer[]): Buffer {
  const body = frames.length === 1 ? frames[0] : Buffer.concat(frames);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`, 'latin1'), body, Buffer.from('\r\n', 'latin1')]);
}

function scheduleRound() {
  if (roundScheduled) return;
  roundScheduled = true;
  setImmediate(runRound);
}

function runRound() {
  roundScheduled = false;
  const started = performance.now();
  if (!round) {
    if (pending.length === 0) return;
    round = { chunk: chunkOf(pending), sockets: [...streams], at: 0, events: pending.length, cpuUs: 0, writes: 0 };
    pending = [];
    stats.rounds += 1;
  }
  const until = SLICE_MS > 0 ? started + SLICE_MS : Infinity;
  const cpu0 = process.cpuUsage();
  const r = round;
  while (r.at < r.sockets.length) {
    const socket = r.sockets[r.at++];
    if (!socket.destroyed) {
      socket.write(r.chunk);
      stats.writes += 1;
      r.writes += 1;
      if (socket.writableLength > 0) stats.writesQueued += 1;
    }
    if ((r.at & 63) === 0 && performance.now() > until) break;
  }
  const cpu = process.cpuUsage(cpu0);
  r.cpuUs += cpu.user + cpu.system;
  if (r.at >= r.sockets.length && roundLog.length < 1000)
    roundLog.push({ events: r.events, bytes: r.chunk.length, writes: r.writes, cpuUs: r.cpuUs });
  const took = performance.now() - started;
  stats.roundMsTotal += took;
  stats.roundMsMax = Math.max(stats.roundMsMax, took);
  if (r.at >= r.sockets.length) round = null;
  if (round || pending.length) scheduleRound();
}

function readBody(req: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method === 'GET' && url.pathname === '/api/health') return json(res, 200, { status: 'ok' });
  if (req.method === 'GET' && url.pathname === '/floor/log') {
    const after = Number(url.searchParams.get('after') ?? 0);
    const count = Math.max(0, lastId - after);
    // ids after `after` are after+1 … lastId
    return json(res, 200, {
      latestId: lastId,
      perUser: [{ count, idSum: (count * (after + 1 + lastId)) / 2 }],
      stats: { ...stats, roundLog },
    });
  }
  if (req.method === 'GET' && url.pathname === '/api/events/object_created') {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write('retry: 2000\n: connected\n\n'); // headers and the first chunk; from here on frames go straight to the socket
    const socket = res.socket!;
    streams.add(socket);
    res.on('close', () => streams.delete(socket));
    return;
  }
  if (req.method === 'PUT' && url.pathname === '/api/objects') {
    const body = JSON.parse(await readBody(req)) as { keyId: string; content: string; authTag: string };
    const id = ++lastId;
    const objectId = randomUUID();
    // The real object_created payload's fields, the ciphertext hex as the real server sends it.
    const payload = {
      id: objectId,
      key_id: body.keyId,
      content: Buffer.from(body.content, 'base64').toString('hex'),
      auth_tag: Buffer.from(body.authTag, 'base64').toString('hex'),
      iv: null,
      metadata: null,
    };
    pending.push(Buffer.from(`id: ${id}\nevent: object_created\ndata: ${JSON.stringify(payload)}\n\n`, 'utf8'));
    stats.events += 1;
    scheduleRound();
    return json(res, 201, { id: objectId, keyId: body.keyId, createdAt: new Date().toISOString() });
  }
  json(res, 404, { message: 'not found' });
});
server.keepAliveTimeout = 0;
server.requestTimeout = 0;
server.headersTimeout = 0;

process.on('SIGTERM', () => {
  for (const s of streams) s.destroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
});
server.listen(Number(process.env.PORT), '127.0.0.1');
