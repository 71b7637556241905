// Event fan-out: N SSE subscribers (N users with one stream each, or one user
// with N streams) held open by separate processes, one writer at a steady
// rate. Checks that every subscriber got every event of its user and reports
// write-to-receipt latency and the server's RSS.
import type { ChildProcess } from 'node:child_process';
import { get as httpGet } from 'node:http';
import type { LogCounts, SeededUser } from '../seed.js';
import type { WriterJob } from '../workers/writer.js';
import { count, type Histogram, merge, newHistogram, percentileMs } from './histogram.js';
import { cpuParts, forkTs, request, rssMb, sleep, stop, watchRss, withCpu } from './proc.js';
import { startRealServer, startStreamsFloorServer } from './server.js';
import { createStoreKey, mapLimit } from './setup.js';

export type FanoutMode = 'distinct' | 'shared';

export interface FanoutOptions {
  dataDir: string;
  env: Record<string, string>;
  users: SeededUser[];
  subscribers: number;
  mode: FanoutMode;
  rate: number;
  /** Writes measured: their deliveries are timed. */
  seconds: number;
  /**
   * Writes at the same rate before the measured ones (default 0): every stream must still receive them, but their
   * deliveries are not timed. The first round over thousands of streams runs on cold code and a cold machine; the
   * request scenarios warm up the same way (autocannon's warmupSeconds).
   */
  warmupSeconds?: number;
  contentBytes: number;
  /** Abort the writes when the server's RSS passes this (protects a shared machine). */
  rssLimitMb: number;
  /** How long to wait for write answers and for deliveries after the last write. */
  graceMs: number;
  /** Run the server under node --cpu-prof, writing the profile here. */
  cpuProfDir?: string;
  /** Run the SSE client processes under node --cpu-prof, writing their profiles here (--client-profile=DIR). */
  clientProfDir?: string;
  /**
   * Measure the streams floor (bench/streams-floor-server.ts: plain node:http, no auth, no database) instead of the
   * real server, with the same clients, writer and checks; its own count of events stands in for the log. One user.
   */
  floor?: boolean;
}

export interface FanoutResult {
  mode: FanoutMode;
  subscribers: number;
  connected: number;
  connectFailures: string[];
  eventsWritten: number;
  writeFailures: string[];
  writesFailed: number;
  achievedRate: number;
  putP50: number | null;
  putP99: number | null;
  deliveriesExpected: number;
  deliveriesReceived: number;
  /** Deliveries whose latency was recorded: those of the writes after the warm-up. */
  timedDeliveries?: number;
  /** Subscribers that received exactly their user's committed events (count and id sum checked against the log). */
  subscribersComplete: number;
  /** object_created events the log holds for the written users after the writes began (answered or not at the writer). */
  eventsCommitted: number;
  duplicates: number;
  streamsClosed: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  rssIdleMb: number | null;
  rssConnectedMb: number | null;
  rssPeakMb: number;
  clientCpuPct: number[];
  /** The server's CPU while the writer ran, percent of one core. */
  serverCpuPct: number | null;
  aborted: string | null;
  /** From the first measured write (after the warm-up) to the writer's last answer (CLOCK_MONOTONIC µs): the window a server profile is summarized over. */
  writesWindow?: { fromUs: number; toUs: number };
  /**
   * CPU per delivery, µs: the server's (user + system, from the first write until every delivery arrived or the grace
   * period ended) and the SSE client processes' together (since their reset, just before the writes). A busy machine
   * stretches latency far more than these.
   */
  cpuPerDelivery?: { serverUserUs: number; serverSystemUs: number; clientsUs: number } | null;
  /** The streams floor's own counters (floor runs only): rounds of writes, socket writes, time spent writing. */
  floorStats?: {
    rounds: number;
    writes: number;
    writesQueued: number;
    events: number;
    roundMsTotal: number;
    roundMsMax: number;
    /** Each round's size and CPU time (user + system, µs, the floor's own process.cpuUsage around its slices). */
    roundLog?: { events: number; bytes: number; writes: number; cpuUs: number }[];
  };
}

const PER_PROCESS = 2500;

export async function runFanout(o: FanoutOptions): Promise<FanoutResult> {
  const server = o.floor
    ? await startStreamsFloorServer({ dataDir: o.dataDir, env: { FLOOR_SLICE_MS: o.env.FLOOR_SLICE_MS ?? '10' } })
    : await startRealServer({ dataDir: o.dataDir, env: o.env, cpuProfDir: o.cpuProfDir });
  const rss = watchRss(server.pid, 250);
  const clients: ChildProcess[] = [];
  // Forked and ready before the writes: its start (tsx compiling it) took half a core for the first ~100 ms of the
  // writes when it was forked at their start, and the first round was timed with it.
  const writer = forkTs('bench/workers/writer.ts');
  try {
    await request(writer, { type: 'ready' }, 'ready', 60_000);
    const rssIdleMb = rssMb(server.pid);
    const port = Number(new URL(server.base).port);
    // Who streams and who is written to: subscriber i belongs to user userOf[i].
    const userOf = Array.from({ length: o.subscribers }, (_, i) => (o.mode === 'shared' ? 0 : i));
    const targetCount = o.mode === 'shared' ? 1 : Math.min(o.subscribers, Math.round(o.rate * o.seconds));
    if (o.floor && o.mode !== 'shared') throw new Error("the streams floor holds one user's streams only");
    const targets = o.floor
      ? [{ token: o.users[0].token, keyId: 'floor' }]
      : await mapLimit(o.users.slice(0, targetCount), 16, async (u) => ({
          token: u.token,
          keyId: await createStoreKey(server.base, u.token),
        }));

    const subs = userOf.map((u) => ({ token: o.users[u].token }));
    const groups: (typeof subs)[] = [];
    // As even as possible (3,000 streams: 1,500 + 1,500): a client process is single-threaded.
    const perProcess = Math.ceil(subs.length / Math.ceil(subs.length / PER_PROCESS));
    for (let i = 0; i < subs.length; i += perProcess) groups.push(subs.slice(i, i + perProcess));
    const connected = await Promise.all(
      groups.map((group) => {
        // BENCH_EVENT_DETAIL=/path: each client process writes its per-event figures to /path.<floor|server>-<subscribers>.<pid> (bench/event-detail.ts).
        const detail = process.env.BENCH_EVENT_DETAIL;
        const env = detail
          ? { ...process.env, BENCH_EVENT_DETAIL: `${detail}.${o.floor ? 'floor' : 'server'}-${o.subscribers}` }
          : process.env;
        const child = forkTs(
          'bench/workers/sse-clients.ts',
          [],
          env,
          o.clientProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.clientProfDir}`] : [],
        );
        clients.push(child);
        return request<{ ok: number; failures: string[] }>(
          child,
          { type: 'connect', port, path: '/api/events/object_created', subscribers: group },
          'connected',
          180_000,
        );
      }),
    );
    await sleep(500);
    const rssConnectedMb = rssMb(server.pid);
    // The truth: the log's own count (and id sum) of each written user's object_created events after this point.
    // (The floor keeps no log: it counts its own events, ids 1, 2, 3, … .)
    const logReader = o.floor
      ? null
      : forkTs('bench/seed.ts', [], {
          PATH: process.env.PATH,
          NODE_ENV: 'development',
          DATA_DIR: o.dataDir,
          LOG_LEVEL: 'warn',
          ...o.env,
        });
    if (logReader) clients.push(logReader);
    const targetUsers = o.users.slice(0, targetCount).map((u) => u.id);
    const readLog = (afterId: number): Promise<LogCounts> =>
      logReader
        ? request<LogCounts>(logReader, { type: 'log', userIds: targetUsers, afterId }, 'log', 30_000)
        : getJson<LogCounts>(`${server.base}/floor/log?after=${afterId}`);
    const baseline = (await readLog(0)).latestId;

    let aborted: string | null = null;
    const guard = setInterval(() => {
      if (rss.peak() > o.rssLimitMb && !aborted) {
        aborted = `server RSS passed ${o.rssLimitMb} MB; writes stopped`;
        writer.kill('SIGKILL');
      }
    }, 250);
    const warmupSeconds = o.warmupSeconds ?? 0;
    const job: WriterJob = {
      type: 'run',
      port,
      targets,
      rate: o.rate,
      seconds: warmupSeconds + o.seconds,
      size: o.contentBytes,
      answerWaitMs: o.graceMs,
    };
    type Written = {
      written: number[];
      failed: number;
      failureSamples: string[];
      achievedRate: number;
      putP50: number | null;
      putP99: number | null;
    };
    // The clients time the events stamped from here on (the writer starts a few ms after this, so the warm-up is
    // that much shorter than asked); their CPU is counted from the first write.
    const measureFromNs = Number(process.hrtime.bigint()) + Math.round(warmupSeconds * 1e9);
    const sseClients = clients.filter((c) => c !== logReader);
    await Promise.all(sseClients.map((c) => request(c, { type: 'reset', measureFromNs }, 'reset', 10_000)));
    rss.reset();
    const writesFromUs = Math.round(measureFromNs / 1000);
    const serverCpu0 = cpuParts(server.pid);
    const { value: written, cpuPct: serverCpuPct } = await withCpu(server.pid, () =>
      request<Written>(writer, job, 'done', job.seconds * 1000 + o.graceMs + 15_000).catch((err): Written => {
        aborted ??= String(err);
        return {
          written: new Array<number>(targets.length).fill(0),
          failed: 0,
          failureSamples: [],
          achievedRate: 0,
          putP50: null,
          putP99: null,
        };
      }),
    );
    clearInterval(guard);
    aborted ??= server.crash();
    const writesWindow = { fromUs: writesFromUs, toUs: Number(process.hrtime.bigint() / 1000n) };

    // Every subscriber of a written user expects each of that user's committed events (the log says which).
    const expectedOf = (log: LogCounts) =>
      userOf.map((u) => (u < log.perUser.length ? log.perUser[u] : { count: 0, idSum: 0 }));
    const graceEnd = performance.now() + o.graceMs;
    while (!aborted && performance.now() < graceEnd) {
      const stats = await Promise.all(
        sseClients.map((c) => request<{ received: number }>(c, { type: 'stats' }, 'stats', 10_000)),
      );
      const expectedNow = expectedOf(await readLog(baseline)).reduce((n, e) => n + e.count, 0);
      if (stats.reduce((n, s) => n + s.received, 0) >= expectedNow) break;
      await sleep(200);
    }
    const serverCpu1 = cpuParts(server.pid);
    const rssPeakMb = rss.peak();
    const reports = await Promise.all(
      sseClients.map((c) =>
        request<{
          counts: number[];
          idSums: number[];
          duplicates: number;
          closed: number;
          cpuPct: number;
          cpuUserMs: number;
          cpuSystemMs: number;
          histogram: Histogram;
        }>(c, { type: 'report' }, 'report', 30_000),
      ),
    );
    // Read after the reports: an event committed in between can only make a subscriber look incomplete, never complete.
    const committed = await readLog(baseline);
    const floorStats = (committed as LogCounts & { stats?: FanoutResult['floorStats'] }).stats;
    const expected = expectedOf(committed);
    const expectedTotal = expected.reduce((a, b) => a + b.count, 0);
    const counts = reports.flatMap((r) => r.counts);
    const idSums = reports.flatMap((r) => r.idSums);
    const histogram = reports.reduce((h, r) => merge(h, r.histogram), newHistogram());
    const delivered = counts.reduce((n, c) => n + Math.max(0, c), 0);
    const perDelivery = (seconds: number) => Math.round(((seconds * 1e6) / delivered) * 100) / 100;
    const cpuPerDelivery =
      serverCpu0 && serverCpu1 && delivered > 0
        ? {
            serverUserUs: perDelivery(serverCpu1.user - serverCpu0.user),
            serverSystemUs: perDelivery(serverCpu1.system - serverCpu0.system),
            clientsUs: perDelivery(reports.reduce((n, r) => n + r.cpuUserMs + r.cpuSystemMs, 0) / 1000),
          }
        : null;
    return {
      mode: o.mode,
      subscribers: o.subscribers,
      connected: connected.reduce((n, c) => n + c.ok, 0),
      connectFailures: connected.flatMap((c) => c.failures).slice(0, 3),
      eventsWritten: written.written.reduce((a, b) => a + b, 0),
      writeFailures: written.failureSamples,
      writesFailed: written.failed,
      achievedRate: written.achievedRate,
      putP50: written.putP50,
      putP99: written.putP99,
      deliveriesExpected: expectedTotal,
      deliveriesReceived: delivered,
      timedDeliveries: count(histogram),
      // Exactly the committed events: same count and same sum of ids (ids arrive strictly increasing, repeats are counted apart).
      subscribersComplete: counts.filter((c, i) => c === expected[i].count && idSums[i] === expected[i].idSum).length,
      eventsCommitted: committed.perUser.reduce((n, e) => n + e.count, 0),
      duplicates: reports.reduce((n, r) => n + r.duplicates, 0),
      streamsClosed: reports.reduce((n, r) => n + r.closed, 0),
      p50: percentileMs(histogram, 50),
      p99: percentileMs(histogram, 99),
      max: percentileMs(histogram, 100),
      rssIdleMb,
      rssConnectedMb,
      rssPeakMb,
      clientCpuPct: reports.map((r) => r.cpuPct),
      serverCpuPct,
      aborted,
      writesWindow,
      cpuPerDelivery,
      ...(floorStats ? { floorStats } : {}),
    };
  } finally {
    rss.close();
    await Promise.all([...clients, writer].map((c) => stop(c, 2000)));
    await server.stop();
  }
}

function getJson<T>(url: string): Promise<T> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text) as T);
        } catch (err) {
          reject(err);
        }
      });
    }).on('error', reject);
  });
}
