// The server's CPU per delivered event for one user's N streams at R events/s
// (issue 26), measured in-process so that it means something on a busy
// machine: wall-clock latency there is mostly other processes, CPU time per
// delivery is not. The test app's server (SQLite, or PostgreSQL with
// DATABASE_URL) runs in this process; the SSE clients are
// bench/workers/sse-clients.ts in their own process, as in the fan-out bench.
// Events are recorded and announced the way the data plane does (payload
// ~2.3 KB as the fan-out bench's, stamped for latency), one per transaction at the given rate.
//
//   npx tsx bench/fanout-cpu.ts [--streams=2000] [--rate=100] [--seconds=5]
// Prints one JSON line: deliveries, server user/system CPU ms, CPU µs per delivery, latency p50/p99 (ms).
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createTestApp } from '../test/support/app.js';
import { createVerifiedUser } from '../test/support/factories.js';
import { type Histogram, merge, newHistogram, percentileMs } from './lib/histogram.js';
import { ROOT } from './lib/proc.js';
import { STAMP_MAGIC_HEX } from './lib/stamp.js';
import { type Stages, instrumentStages } from './lib/fanout-stages.js';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const STREAMS = arg('streams', 2000);
const RATE = arg('rate', 100);
const SECONDS = arg('seconds', 5);
/** Ciphertext bytes per event (hex in the payload: twice as many characters), as bench/run.ts writes them. */
const CONTENT_BYTES = arg('content-bytes', 1024);
const PER_PROCESS = 2500;
/** --stages: where each event's time goes inside the server (commit, broker, feed flush start, member writes), see bench/lib/fanout-stages.ts. */
const stages: Stages | null = process.argv.includes('--stages') ? instrumentStages() : null;

const t = await createTestApp({ env: { EVENTS_MAX_STREAMS_PER_USER: String(Math.max(20, STREAMS)) } });
await t.app.listen({ port: 0, host: '127.0.0.1' });
const port = (t.app.server.address() as AddressInfo).port;
const user = await createVerifiedUser(t);

function ask<T>(child: ChildProcess, message: object, reply: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (m: { type: string }) => {
      if (m.type !== reply) return;
      child.off('message', onMessage);
      resolve(m as T);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

const sizes: number[] = [];
for (let left = STREAMS; left > 0; left -= PER_PROCESS) sizes.push(Math.min(PER_PROCESS, left));
/** --client-profile=DIR: the client processes run under --cpu-prof, their profiles written there. */
const clientProfDir = process.argv.find((a) => a.startsWith('--client-profile='))?.slice('--client-profile='.length);
const clientArgv = ['--import', 'tsx', ...(clientProfDir ? ['--cpu-prof', `--cpu-prof-dir=${clientProfDir}`] : [])];
/** --client-script=PATH: another client worker (the one before a change, for a comparison in one sitting). */
const clientScript =
  process.argv.find((a) => a.startsWith('--client-script='))?.slice('--client-script='.length) ??
  'bench/workers/sse-clients.ts';
const clients = sizes.map(() =>
  fork(join(ROOT, clientScript), [], {
    cwd: ROOT,
    execArgv: clientArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  }),
);
try {
  await Promise.all(
    clients.map((c, i) =>
      ask(
        c,
        {
          type: 'connect',
          port,
          path: '/api/events/object_created',
          subscribers: Array.from({ length: sizes[i] }, () => ({ token: user.token })),
        },
        'connected',
      ),
    ),
  );
  await new Promise((r) => setTimeout(r, 500));
  await Promise.all(clients.map((c) => ask(c, { type: 'reset' }, 'reset')));

  // As the fan-out bench's events: 1 KB of ciphertext as hex (random, as ciphertext is) plus the object's other fields.
  const filler = randomBytes(CONTENT_BYTES - 16).toString('hex');
  const extra = {
    key_id: `k_${randomBytes(8).toString('hex')}`,
    auth_tag: randomBytes(16).toString('hex'),
    iv: randomBytes(12).toString('hex'),
    metadata: { size: CONTENT_BYTES, kind: 'object' },
  };
  // The stamp as the clients read it: magic, 8 unused hex digits, the send time (ns) as 16.
  const content = () => `${STAMP_MAGIC_HEX}00000000${process.hrtime.bigint().toString(16).padStart(16, '0')}${filler}`;
  const total = RATE * SECONDS;
  stages?.start();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  // Each write its own transaction, started on schedule without waiting for the one before (as the fan-out
  // bench's writer sends its PUTs): one at a time, PostgreSQL's round trips held the rate to ~20 events/s.
  const writes: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const text = content();
    writes.push(
      t.database.db
        .transaction()
        .execute((trx) =>
          t.services.events.eventRecorder.record(trx, [
            { userId: user.id, type: 'object_created', payload: { id: `o${i}`, ...extra, content: text } as never },
          ]),
        )
        .then(() => {
          stages?.committed(text);
          t.services.events.eventRecorder.announce();
        }),
    );
  }
  await Promise.all(writes);
  const writesDoneMs = performance.now() - started;
  const expected = total * STREAMS;
  let received = 0;
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const stats = await Promise.all(clients.map((c) => ask<{ received: number }>(c, { type: 'stats' }, 'stats')));
    received = stats.reduce((n, s) => n + s.received, 0);
    if (received >= expected) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const reports = await Promise.all(
    clients.map((c) =>
      ask<{
        histogram: Histogram;
        cpuPct: number;
        cpuUserMs: number;
        cpuSystemMs: number;
        duplicates: number;
        unstamped: number;
      }>(c, { type: 'report' }, 'report'),
    ),
  );
  const clientUs = reports.reduce((n, r) => n + r.cpuUserMs + r.cpuSystemMs, 0) * 1000;
  const histogram = reports.reduce((h, r) => merge(h, r.histogram), newHistogram());
  console.log(
    JSON.stringify({
      backend: t.database.dialect,
      streams: STREAMS,
      rate: RATE,
      seconds: SECONDS,
      received,
      expected,
      duplicates: reports.reduce((n, r) => n + r.duplicates, 0),
      unstamped: reports.reduce((n, r) => n + r.unstamped, 0),
      wallMs: Math.round(wallMs),
      // The last write's commit: SECONDS × 1000 when the writes kept the rate.
      writesDoneMs: Math.round(writesDoneMs),
      serverUserMs: Math.round(cpu.user / 1000),
      serverSystemMs: Math.round(cpu.system / 1000),
      cpuUsPerDelivery: Number(((cpu.user + cpu.system) / Math.max(1, received)).toFixed(2)),
      p50: percentileMs(histogram, 50),
      p99: percentileMs(histogram, 99),
      clientCpuPct: reports.map((r) => r.cpuPct),
      // The clients' CPU (user + system, from their reset to their report) per delivery: on one machine it is taken from the server.
      clientUserMs: reports.reduce((n, r) => n + r.cpuUserMs, 0),
      clientSystemMs: reports.reduce((n, r) => n + r.cpuSystemMs, 0),
      clientCpuUsPerDelivery: Number((clientUs / Math.max(1, received)).toFixed(2)),
      ...(stages ? { stages: stages.report() } : {}),
    }),
  );
} finally {
  // The clients exit after their report (a profile is written on exit): give them a moment before the kill.
  await Promise.all(
    clients.map((c) =>
      c.exitCode !== null
        ? null
        : new Promise((r) => {
            c.once('exit', r);
            setTimeout(r, 5000).unref();
          }),
    ),
  );
  for (const c of clients) c.kill();
  await t.close();
}
process.exit(0);
