// SSE subscriber process: holds many event streams open, checks every
// object_created frame's id (increasing: a repeat or a step back counts as a
// duplicate), counts the frames and sums their ids per stream (the orchestrator
// compares both with the event log), and records write-to-receipt latency from
// the stamp the writer put in the ciphertext.
//
// Parsing works on the Buffers as they arrive (indexOf, no string building):
// at hundreds of MB/s a client that concatenated strings per chunk would be the
// bottleneck and its own latency would show up as the server's.
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { type Histogram, newHistogram, record } from '../lib/histogram.js';
import { STAMP_MAGIC_HEX } from '../lib/stamp.js';

export interface Subscriber {
  token: string;
}

interface Stream {
  index: number;
  /** The start of a frame that has not fully arrived yet (rare: chunks usually end on a frame boundary). */
  rest: Buffer | null;
  lastId: number;
  received: number;
  idSum: number;
  duplicates: number;
}

const streams: Stream[] = [];
const sockets: { destroy(): void }[] = [];
let histogram: Histogram = newHistogram();
/**
 * Deliveries of events the writer stamped before this (CLOCK_MONOTONIC ns) are counted and checked but not timed:
 * the fan-out's warm-up, as autocannon's before a request scenario (set by 'reset'; 0 times everything).
 */
let measureFromNs = 0;
let unstamped = 0;
/** The first repeated or out-of-order ids, for the report. */
const dupSamples: string[] = [];
let closed = 0;
/**
 * BENCH_EVENT_DETAIL=/path (a diagnostic, off by default): per event id, its deliveries' count, latency sum and
 * maximum (µs), the deliveries over 100 ms, and its stamp; written to /path.<pid> with the report. It tells an
 * event that reached every stream late (the server's side) from streams that read late (a client's).
 */
const eventDetailPath = process.env.BENCH_EVENT_DETAIL || null;
const eventDetail = new Map<number, [n: number, sumUs: number, maxUs: number, over100: number, stampNs: number]>();
let cpuMark = process.cpuUsage();
let timeMark = performance.now();

/** Every socket of this process reads into this one buffer; a read is handled before the next one lands. */
const readBuffer = Buffer.allocUnsafe(256 * 1024);
const FRAME_END = Buffer.from('\n\n');
const ID = Buffer.from('id: ');
const EVENT = Buffer.from('event: object_created\n');
const CONTENT = Buffer.from('"content":"');
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const NL = 0x0a;

/** Now on the writer's clock (CLOCK_MONOTONIC), in ns, as a number (exact below 2^53 ns, about 104 days of uptime). */
function nowNs(): number {
  const [s, ns] = process.hrtime();
  return s * 1e9 + ns;
}

/** Hex digit values by byte (-1: not a hex digit). */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}
const MAGIC_HEX = Buffer.from(STAMP_MAGIC_HEX);

/** The value of `digits` hex digits at buf[at], or -1. Byte by byte: no strings at 250,000 frames a second. */
function hexAt(buf: Buffer, at: number, digits: number): number {
  let value = 0;
  for (let i = 0; i < digits; i++) {
    const d = HEX[buf[at + i]];
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

/** The writer's send time (ns) from the hex content at buf[at], or null when it carries no stamp. */
function stampAt(buf: Buffer, at: number, end: number): number | null {
  if (at + 32 > end || !startsWith(buf, at, MAGIC_HEX)) return null;
  const high = hexAt(buf, at + 16, 8);
  const low = hexAt(buf, at + 24, 8);
  return high < 0 || low < 0 ? null : high * 2 ** 32 + low;
}

function startsWith(buf: Buffer, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > buf.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

/** Handles one complete frame buf[start, end) (without its blank line). */
function onFrame(stream: Stream, buf: Buffer, start: number, end: number, now: number) {
  // Frames are `id: N\nevent: T\ndata: {...}`; comments (`: keep-alive`) and other types are skipped.
  if (!startsWith(buf, start, ID)) return;
  let at = start + ID.length;
  let id = 0;
  while (at < end && buf[at] !== NL) id = id * 10 + (buf[at++] - 48);
  at += 1;
  if (at + EVENT.length > end || !startsWith(buf, at, EVENT)) return;
  if (id <= stream.lastId) {
    if (dupSamples.length < 5)
      dupSamples.push(`stream ${stream.index}: id ${id} after ${stream.lastId} (received ${stream.received})`);
    return void (stream.duplicates += 1);
  }
  stream.lastId = id;
  stream.received += 1;
  stream.idSum += id;
  const content = buf.indexOf(CONTENT, at + EVENT.length);
  const stamp = content >= 0 && content < end ? stampAt(buf, content + CONTENT.length, end) : null;
  if (stamp === null) unstamped += 1;
  else {
    const us = (now - stamp) / 1000;
    if (stamp >= measureFromNs) record(histogram, us);
    if (eventDetailPath) {
      const d = eventDetail.get(id);
      if (!d) eventDetail.set(id, [1, us, us, us > 100_000 ? 1 : 0, stamp]);
      else {
        d[0] += 1;
        d[1] += us;
        if (us > d[2]) d[2] = us;
        if (us > 100_000) d[3] += 1;
      }
    }
  }
}

/**
 * Body bytes of the event stream (after HTTP chunk decoding). `piece` is a view
 * into the process's one read buffer, reused by the next read: what must stay
 * (the start of a frame that has not fully arrived) is copied. Only that
 * frame is joined with the next piece, not the whole read.
 */
function onBody(stream: Stream, piece: Buffer, now: number) {
  let start = 0;
  const rest = stream.rest;
  if (rest) {
    // The blank line may straddle the two: the rest ends with "\n" and the piece starts with one.
    const end = rest[rest.length - 1] === NL && piece[0] === NL ? 0 : piece.indexOf(FRAME_END);
    if (end < 0) {
      stream.rest = Buffer.concat([rest, piece]);
      return;
    }
    const through = end === 0 && rest[rest.length - 1] === NL && piece[0] === NL ? 1 : end + 2;
    const frame = Buffer.concat([rest, piece.subarray(0, through)]);
    stream.rest = null;
    onFrame(stream, frame, 0, frame.length - 2, now);
    start = through;
  }
  let end: number;
  while ((end = piece.indexOf(FRAME_END, start)) >= 0) {
    onFrame(stream, piece, start, end, now);
    start = end + 2;
  }
  if (start < piece.length) stream.rest = Buffer.from(piece.subarray(start));
}

/** HTTP/1.1 chunked transfer decoding (size line, data, CRLF); feed() is false after the last chunk. */
export function chunkDecoder(onData: (piece: Buffer, now: number) => void) {
  let remaining = -1; // bytes left in the current chunk's data, or -1 while reading a size line
  let skip = 0; // the CRLF after a chunk's data
  let sizeLine: Buffer | null = null;
  return {
    feed(buf: Buffer, now: number): boolean {
      let at = 0;
      while (at < buf.length) {
        if (skip > 0) {
          const n = Math.min(skip, buf.length - at);
          skip -= n;
          at += n;
        } else if (remaining > 0) {
          const n = Math.min(remaining, buf.length - at);
          onData(buf.subarray(at, at + n), now);
          remaining -= n;
          at += n;
          if (remaining === 0) {
            remaining = -1;
            skip = 2;
          }
        } else {
          const line = sizeLine ? Buffer.concat([sizeLine, buf.subarray(at)]) : buf;
          const from = sizeLine ? 0 : at;
          const eol = line.indexOf(CRLF, from);
          if (eol < 0) {
            sizeLine = Buffer.from(line.subarray(from));
            return true;
          }
          const size = parseInt(line.toString('latin1', from, eol), 16);
          at = sizeLine ? buf.length - (line.length - (eol + 2)) : eol + 2;
          sizeLine = null;
          if (!(size > 0)) return false;
          remaining = size;
        }
      }
      return true;
    },
  };
}

/**
 * HTTP/1.1 over a plain socket: the request, the status line and headers, then
 * the chunked body decoded by hand (size line, data, CRLF). node:http's client
 * costs several times more per read, and at 100,000 frames a second the
 * client's own CPU would be taken from the server on this shared machine.
 */
function open(port: number, path: string, sub: Subscriber, index: number): Promise<string | null> {
  return new Promise((resolve) => {
    const stream: Stream = { index, rest: null, lastId: 0, received: 0, idSum: 0, duplicates: 0 };
    // Reads land in the process's one buffer (onread): no Buffer allocated per read, which at 500,000 frames a
    // second made the clients' garbage collection alone cost more than the server's writes.
    const socket = connect({
      host: '127.0.0.1',
      port,
      onread: {
        buffer: readBuffer,
        callback: (nread: number) => {
          onData(readBuffer.subarray(0, nread));
          return true;
        },
      },
    });
    socket.setNoDelay(true);
    let head: Buffer | null = Buffer.alloc(0);
    let chunked = false;
    const decoder = chunkDecoder((piece, now) => onBody(stream, piece, now));
    let settled = false;
    const settle = (failure: string | null) => {
      if (settled) return;
      settled = true;
      resolve(failure);
    };
    const timer = setTimeout(() => {
      socket.destroy();
      settle('connect timeout');
    }, 30_000);
    socket.on('error', (err) => settle(err.message));
    socket.on('close', () => {
      clearTimeout(timer);
      if (head === null) closed += 1;
      settle('closed before the response headers');
    });
    const onData = (data: Buffer) => {
      const now = nowNs();
      let buf = data;
      if (head !== null) {
        buf = head.length ? Buffer.concat([head, data]) : data;
        const endOfHead = buf.indexOf(HEAD_END);
        if (endOfHead < 0) return void (head = Buffer.from(buf));
        const text = buf.toString('latin1', 0, endOfHead);
        const status = Number(text.slice(9, 12));
        if (status !== 200) {
          socket.destroy();
          return settle(`${status} ${buf.toString('utf8', endOfHead + 4).slice(0, 200)}`);
        }
        chunked = /\r\ntransfer-encoding:\s*chunked/i.test(text);
        head = null;
        clearTimeout(timer);
        streams.push(stream);
        sockets.push(socket);
        settle(null);
        buf = buf.subarray(endOfHead + 4);
      }
      if (!chunked) return onBody(stream, buf, now);
      if (!decoder.feed(buf, now)) socket.end(); // the last chunk: the server ended the stream
    };
    socket.write(
      `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${sub.token}\r\naccept: text/event-stream\r\n\r\n`,
    );
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

type Message =
  | { type: 'connect'; port: number; path: string; subscribers: Subscriber[] }
  | { type: 'reset'; measureFromNs?: number }
  | { type: 'stats' }
  | { type: 'report' };

process.on('message', async (msg: Message) => {
  try {
    if (msg.type === 'connect') {
      const result = await connectAll(msg.port, msg.path, msg.subscribers);
      process.send!({ type: 'connected', ...result });
    } else if (msg.type === 'reset') {
      histogram = newHistogram();
      measureFromNs = msg.measureFromNs ?? 0;
      eventDetail.clear();
      cpuMark = process.cpuUsage();
      timeMark = performance.now();
      process.send!({ type: 'reset' });
    } else if (msg.type === 'stats') {
      process.send!({ type: 'stats', received: streams.reduce((n, s) => n + s.received, 0), closed });
    } else if (msg.type === 'report') {
      const cpu = process.cpuUsage(cpuMark);
      const cpuPct = Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - timeMark)) * 100);
      // Per subscriber (in the order given): events received (-1 when its stream never opened) and the sum of their ids.
      const counts = new Array<number>(subscriberCount).fill(-1);
      const idSums = new Array<number>(subscriberCount).fill(0);
      for (const s of streams) {
        counts[s.index] = s.received;
        idSums[s.index] = s.idSum;
      }
      const report = {
        type: 'report',
        counts,
        idSums,
        duplicates: streams.reduce((n, s) => n + s.duplicates, 0),
        dupSamples,
        unstamped,
        closed,
        cpuPct,
        cpuUserMs: Math.round(cpu.user / 1000),
        cpuSystemMs: Math.round(cpu.system / 1000),
        histogram,
      };
      if (eventDetailPath) writeFileSync(`${eventDetailPath}.${process.pid}`, JSON.stringify([...eventDetail]));
      if (dupSamples.length) console.error(`sse-clients: repeated or out-of-order ids: ${dupSamples.join('; ')}`);
      for (const socket of sockets) socket.destroy();
      process.send!(report, () => process.exit(0));
    }
  } catch (err) {
    process.send!({ type: 'error', error: String(err) });
  }
});
