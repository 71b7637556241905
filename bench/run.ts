// npm run bench [-- --quick] [--profile] [--no-build] [--only=objects,streams,fanout,connect,knowledge,isolation,profiles,calls,analytics,voice,attack,agent-tests]
//   the regression guard: every run compares CPU µs per request with bench/baseline.json (loud when > 10% above);
//   --accept-baseline records this run's figures there (commit the file)
//   the voice agent's latency alone: npm run bench -- --only=voice [--quick] [--backend=sqlite,postgres] (bench/voice.ts)
//   a campaign dialled by two instances on one PostgreSQL alone: DATABASE_URL=… npm run bench -- --only=campaigns [--quick --backend=postgres] (bench/campaigns.ts; --quick runs need --backend=postgres)
//   the media sockets under attack alone (another user's p99, memory per web call): npm run bench -- --only=attack [--quick] (bench/attack.ts)
//   agent tests alone (200 six-turn text-mode tests, another user's p99): npm run bench -- --only=agent-tests [--quick] (bench/agent-tests.ts)
//   GET /api/analytics/calls at 100,000 calls alone: npm run bench -- --only=analytics [--quick] (bench/analytics.ts)
//   worst uploads vs another user's GET /api/auth alone: npm run bench -- --quick --only=isolation [--backend=sqlite,postgres]
//   connector ingestion alone: npm run bench -- --quick --only=connect [--backend=sqlite,postgres]
//   knowledge retrieval alone: npm run bench -- --only=knowledge [--backend=sqlite,postgres]
//   fan-out iteration: [--subscribers=1000,5000] [--fanout-mode=one-user,one-each] [--fanout-seconds=N] [--rate=N] [--backend=sqlite,postgres]
//     one-user rows are preceded by the streams floor (bench/streams-floor-server.ts) in full runs and with --only=streams
//     (--no-streams-floor skips it; --streams-floor adds it to a --quick run of everything);
//     --floor-slice-ms=N: the floor yields to its event loop every N ms of a round (10 by default, as the server; 0: never)
// Builds the server, then measures in one run: the floor server, the real
// server on SQLite (and PostgreSQL when DATABASE_URL is set, full mode), SSE
// fan-out, start-up time and RSS. Writes bench/results/latest.json and
// BENCHMARKS.md. Every scenario is bounded in time; every child is stopped.
import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { SeededUser } from './seed.js';
import type { LoadJob, LoadResult } from './workers/load.js';
import { type FanoutMode, type FanoutResult, runFanout } from './lib/fanout.js';
import { findProfile, summarizeProfile } from './lib/profile.js';
import { ROOT, forkTs, killAll, request, rssMb, rssParts, sleep, stop, withCpu } from './lib/proc.js';
import { checkTargets } from './lib/checks.js';
import { acceptBaseline, baselineChecks, readBaseline, shout } from './lib/baseline.js';
import {
  type Check,
  type LoadFigures,
  type ObjectRow,
  type Results,
  spliceFanoutSection,
  writeResults,
} from './lib/report.js';
import { type RunningServer, startFloorServer, startRealServer } from './lib/server.js';
import { createBenchUser, objectBody, prefillObjects } from './lib/setup.js';
import { runKnowledgeBench } from './lib/knowledge.js';
import { runIngest } from './lib/ingest.js';
import { runUploadIsolation } from './lib/isolation.js';
import { spliceAnalyticsSection } from './lib/analytics-report.js';
import { spliceVoiceSection } from './lib/voice-report.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
/**
 * --only=objects,fanout,connect,knowledge,isolation,profiles,calls,voice runs a subset (BENCHMARKS.md then holds only
 * that subset; calls write bench/results/calls-<backend>.json). The voice agent (bench/voice.ts, full mode by default)
 * writes bench/results/voice-<backend>.json and only the "Voice agent" section of BENCHMARKS.md: --only=voice leaves
 * the rest of the file as it is, and every run keeps that section.
 */
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',') ?? [
  'objects',
  'fanout',
  'connect',
  'knowledge',
  'isolation',
  'profiles',
  'calls',
  ...(quick ? [] : ['voice', 'attack', 'agent-tests', 'analytics', 'campaigns']),
];
/**
 * --only=streams: one user's 5,000 streams at 100 events/s alone (issue 26), a bounded fan-out run (2 s of writes in
 * quick mode, 10 s in full, then the grace period). --subscribers and --fanout-seconds still apply.
 */
const streamsOnly = only.includes('streams') && !only.includes('fanout');
if (streamsOnly) only.push('fanout');
/** The streams floor (bench/streams-floor-server.ts) before each one-user fan-out row: full runs and --only=streams. */
const withStreamsFloor =
  !args.includes('--no-streams-floor') && (!quick || streamsOnly || args.includes('--streams-floor'));
/** Records streamed through POST /api/connect in the ingestion scenario (issue 14: 10,000, in both modes). */
const INGEST_RECORDS = 10_000;
const plan: {
  warmup: number;
  seconds: number;
  prefill: number;
  fanoutSeconds: number;
  fanoutWarmup: number;
  graceMs: number;
  subscriberCounts: number[];
  profile: boolean;
  hardLimitS: number;
} = quick
  ? {
      warmup: 1,
      seconds: 3,
      prefill: 300,
      fanoutSeconds: 2,
      fanoutWarmup: 1,
      graceMs: 4000,
      subscriberCounts: [1000],
      profile: args.includes('--profile'),
      hardLimitS: 170,
    }
  : {
      warmup: 3,
      seconds: 10,
      prefill: 2000,
      fanoutSeconds: 10,
      fanoutWarmup: 3,
      graceMs: 15_000,
      subscriberCounts: [1000, 5000],
      profile: true,
      hardLimitS: 1500,
    };
// The voice agent's step has a limit of its own (640 s quick, 1080 s full, with its hearing figures): the run's covers it.
if (only.includes('voice')) plan.hardLimitS += quick ? 640 : 460;
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const numbers = (text: string | undefined) =>
  text
    ?.split(',')
    .map(Number)
    .filter((n) => Number.isFinite(n) && n > 0);
plan.subscriberCounts = numbers(flag('subscribers')) ?? (streamsOnly ? [5000] : plan.subscriberCounts);
/** --seconds=N measures each load scenario for N seconds (e.g. longer profiles in quick mode). */
plan.seconds = numbers(flag('seconds'))?.[0] ?? plan.seconds;
plan.fanoutSeconds = numbers(flag('fanout-seconds'))?.[0] ?? plan.fanoutSeconds;
/** --fanout-warmup=N: seconds of fan-out writes before the timed ones (0 times every write, as before 27 Nov 2026). */
const fanoutWarmupFlag = Number(flag('fanout-warmup'));
if (flag('fanout-warmup') !== undefined && Number.isFinite(fanoutWarmupFlag) && fanoutWarmupFlag >= 0)
  plan.fanoutWarmup = fanoutWarmupFlag;
/** --fanout-mode=one-user (one user, many streams) and/or one-each (one user each); both by default. */
const fanoutModes: FanoutMode[] = (
  flag('fanout-mode')?.split(',') ?? (streamsOnly ? ['one-user'] : ['one-each', 'one-user'])
).map((m) => (m === 'one-user' ? 'shared' : 'distinct'));
/** --backend=sqlite,postgres (PostgreSQL needs DATABASE_URL); default: SQLite, plus PostgreSQL in full mode. */
const backendNames = flag('backend')?.split(',');
/** --server-env=EVENTS_COALESCE_MS=40,… passes settings to the fan-out servers (for trying them out). */
const serverEnv: Record<string, string> = Object.fromEntries(
  (flag('server-env')?.split(',') ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const CONNECTIONS = 50;
const FANOUT_RATE = numbers(flag('rate'))?.[0] ?? 100;
const CONTENT_BYTES = 1024;

/** Opening thousands of sockets needs a higher open-file limit: re-run under a raised `ulimit -n` when allowed. */
function ensureFileLimit(needed: number): void {
  if (process.env.BENCH_FD_RAISED) return;
  const [soft, hard] = execFileSync('sh', ['-c', 'ulimit -Sn; ulimit -Hn'])
    .toString()
    .trim()
    .split('\n')
    .map((v) => (v === 'unlimited' ? Infinity : Number(v)));
  if (soft >= needed) return;
  const target = Math.min(hard, 65_536);
  if (target <= soft)
    return console.warn(`open-file limit ${soft} is below ${needed} and cannot be raised; fan-out may fail`);
  console.log(`bench: raising the open-file limit from ${soft} to ${target}`);
  const rerun = spawnSync(
    'sh',
    ['-c', `ulimit -n ${target} && exec "$0" "$@"`, process.execPath, '--import', 'tsx', 'bench/run.ts', ...args],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, BENCH_FD_RAISED: '1' },
    },
  );
  process.exit(rerun.status ?? 1);
}

function codeVersion(): Results['code'] {
  const git = (...a: string[]) => spawnSync('git', a, { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    changedSrcFiles: git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length,
  };
}

interface Backend {
  name: 'sqlite' | 'postgres';
  env: Record<string, string>;
  drop?: () => Promise<void>;
}

/** A fresh PostgreSQL schema for this run, dropped at the end. */
async function postgresBackend(url: string): Promise<Backend> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const result = await client.query(sql);
    await client.end();
    return result;
  };
  await admin(`create schema ${schema}`);
  // The database's own settings move its latencies as much as the server does (.ci/pg-setup.sh): named in the report.
  const shown = await admin(
    `select string_agg(name || ' ' || current_setting(name), ', ' order by name) as s from pg_settings where name in ('shared_buffers', 'synchronous_commit', 'max_wal_size', 'server_version')`,
  );
  results.settings.postgres = shown.rows[0]?.s ?? null;
  const withSchema = new URL(url);
  withSchema.searchParams.set('options', `-c search_path=${schema}`);
  return {
    name: 'postgres',
    env: { DATABASE_URL: withSchema.toString() },
    drop: () => admin(`drop schema ${schema} cascade`).then(() => undefined),
  };
}

let loadWorker: ChildProcess | null = null;

/** One measurement in the (long-lived) load generator process. */
async function load(
  server: RunningServer,
  job: Omit<LoadJob, 'type' | 'connections' | 'warmupSeconds' | 'seconds'>,
): Promise<LoadFigures> {
  if (!loadWorker || loadWorker.exitCode !== null) loadWorker = forkTs('bench/workers/load.ts');
  const child = loadWorker;
  const full: LoadJob = {
    type: 'run',
    connections: CONNECTIONS,
    warmupSeconds: plan.warmup,
    seconds: plan.seconds,
    ...job,
  };
  const { value: r, cpuPct } = await withCpu(server.pid, () =>
    request<LoadResult>(child, full, 'result', (plan.warmup + plan.seconds + 30) * 1000),
  );
  if (r.non2xx + r.errors + r.timeouts > 0)
    results.failures.push(
      `${server.name} ${job.method} ${job.url}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`,
    );
  return { rps: r.rps, p50: r.p50, p99: r.p99, errors: r.non2xx + r.errors + r.timeouts, serverCpuPct: cpuPct };
}

const started = Date.now();
const tmp = mkdtempSync(join(tmpdir(), 'wsapi-bench-'));
const dir = (name: string) => {
  const path = join(tmp, `${name}-${randomBytes(3).toString('hex')}`);
  mkdirSync(path, { recursive: true });
  return path;
};
const secrets = { MASTER_KEY: randomBytes(32).toString('base64'), JWT_SECRET: randomBytes(48).toString('base64url') };
const results: Results = {
  date: new Date().toISOString(),
  code: codeVersion(),
  mode: quick ? 'quick' : 'full',
  // A subset (--only=…) says so in the header: its BENCHMARKS.md holds only those scenarios.
  only: args.some((a) => a.startsWith('--only=')) ? only : undefined,
  durationSeconds: 0,
  machine: {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    os: `${process.platform} ${process.arch}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
  },
  settings: {
    connections: CONNECTIONS,
    secondsPerScenario: plan.seconds,
    warmupSeconds: plan.warmup,
    objectBytes: CONTENT_BYTES,
    fanoutRatePerSecond: FANOUT_RATE,
    fanoutSeconds: plan.fanoutSeconds,
    fanoutWarmupSeconds: plan.fanoutWarmup,
    subscribers: plan.subscriberCounts,
  },
  startup: [],
  objects: [],
  fanout: [],
  ingest: [],
  profiles: {},
  knowledge: [],
  isolation: [],
  checks: [],
  failures: [],
};

/** Floor and real server side by side, each real scenario right after its floor. */
async function objectScenarios(backend: Backend, floor: RunningServer) {
  // PostgreSQL is also compared with the floor on PostgreSQL (report.ts explains why).
  const pgFloor =
    backend.name === 'postgres'
      ? await startFloorServer({ dataDir: dir('floor-pg'), env: { DATABASE_URL: backend.env.DATABASE_URL } })
      : null;
  const server = await startRealServer({
    dataDir: dir(`${backend.name}-objects`),
    env: { ...secrets, ...backend.env },
  });
  try {
    await sleep(1000);
    const parts = rssParts(server.pid);
    results.startup.push({
      backend: backend.name,
      startMs: server.startMs,
      idleRssMb: rssMb(server.pid),
      anonMb: parts?.anonMb ?? null,
      fileMb: parts?.fileMb ?? null,
    });
    const user = await createBenchUser(server.base);
    const body = objectBody(user.keyId, CONTENT_BYTES);
    const ids = await prefillObjects(server.base, user.jwt, body, plan.prefill);
    const floorIds = await prefillObjects(floor.base, 'none', body, plan.prefill);
    const pgFloorIds = pgFloor ? await prefillObjects(pgFloor.base, 'none', body, plan.prefill) : [];
    const json = { 'content-type': 'application/json' };
    const floorPut = (f: RunningServer) => () =>
      load(f, { url: `${f.base}/api/objects`, method: 'PUT', headers: json, body });
    const floorGet = (f: RunningServer, fIds: string[]) => () =>
      load(f, { url: f.base, method: 'GET', headers: {}, paths: fIds.map((id) => `/api/objects/${id}`) });
    const pairs: {
      scenario: string;
      floor: () => Promise<LoadFigures>;
      pgFloor: (() => Promise<LoadFigures>) | null;
      real: () => Promise<LoadFigures>;
    }[] = [
      {
        scenario: 'PUT /api/objects (1 KiB, API key)',
        floor: floorPut(floor),
        pgFloor: pgFloor && floorPut(pgFloor),
        real: () =>
          load(server, {
            url: `${server.base}/api/objects`,
            method: 'PUT',
            headers: { ...json, authorization: `Bearer ${user.apiKey}` },
            body,
          }),
      },
      {
        scenario: 'GET /api/objects/{id} (JWT)',
        floor: floorGet(floor, floorIds),
        pgFloor: pgFloor && floorGet(pgFloor, pgFloorIds),
        real: () =>
          load(server, {
            url: server.base,
            method: 'GET',
            headers: { authorization: `Bearer ${user.jwt}` },
            paths: ids.map((id) => `/api/objects/${id}`),
          }),
      },
    ];
    const measureFloor = (name: string, run: () => Promise<LoadFigures>) =>
      run().catch((err) => {
        results.failures.push(`${name} ${err}`);
        return null;
      });
    let floorRead: LoadFigures | null = null;
    for (const pair of pairs) {
      const floorFigures = await measureFloor(`floor ${pair.scenario}:`, pair.floor);
      const pgFloorFigures = pair.pgFloor
        ? await measureFloor(`PostgreSQL floor ${pair.scenario}:`, pair.pgFloor)
        : undefined;
      if (pair.scenario.startsWith('GET')) floorRead = floorFigures;
      await record(backend.name, pair.scenario, pair.real, floorFigures, pgFloorFigures);
    }
    await record(
      backend.name,
      'GET /api/auth (JWT; floor = point read)',
      () =>
        load(server, {
          url: `${server.base}/api/auth`,
          method: 'GET',
          headers: { authorization: `Bearer ${user.jwt}` },
        }),
      floorRead,
    );
  } finally {
    noteCrash(server);
    noteCrash(floor);
    if (pgFloor) noteCrash(pgFloor);
    await server.stop();
    await pgFloor?.stop();
  }
}

function noteCrash(server: RunningServer) {
  const crash = server.crash();
  if (crash) results.failures.push(crash);
}

async function record(
  backend: string,
  scenario: string,
  run: () => Promise<LoadFigures>,
  floor: LoadFigures | null,
  pgFloor?: LoadFigures | null,
) {
  const ratio = (figures: LoadFigures, to: LoadFigures | null | undefined) =>
    to ? Math.round((figures.rps / to.rps) * 100) / 100 : null;
  try {
    const figures = await run();
    const row: ObjectRow = { backend, scenario, figures, floor, ratio: ratio(figures, floor) };
    if (pgFloor !== undefined) Object.assign(row, { pgFloor, pgRatio: ratio(figures, pgFloor) });
    results.objects.push(row);
  } catch (err) {
    results.objects.push({ backend, scenario, figures: null, floor, ratio: null, error: String(err).slice(0, 200) });
  }
}

/** Phone-verified users with session JWTs, written straight into the database before the server starts (bench/seed.ts). */
async function seedUsers(dataDir: string, env: Record<string, string>, count: number): Promise<SeededUser[]> {
  const seeder = forkTs('bench/seed.ts', [], {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ...env,
  });
  return (await request<{ users: SeededUser[] }>(seeder, { type: 'seed', count }, 'seeded', 120_000)).users;
}

/** Connector ingestion on one backend: 10,000 records through POST /api/connect, then PUT /api/objects on the same server. */
async function ingestScenario(backend: Backend) {
  const putBody = (keyId: string) => objectBody(keyId, CONTENT_BYTES);
  const r = await runIngest({
    backend: backend.name,
    dataDir: dir(`${backend.name}-connect`),
    env: { ...secrets, ...backend.env },
    records: INGEST_RECORDS,
    recordBytes: CONTENT_BYTES,
    measurePut: (server, user) =>
      load(server, {
        url: `${server.base}/api/objects`,
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.apiKey}` },
        body: putBody(user.keyId),
      }),
  });
  results.ingest.push(r);
  if (r.error) results.failures.push(`connect ${backend.name}: ${r.error}`);
}

async function fanoutScenarios(backend: Backend) {
  const dataDir = dir(`${backend.name}-fanout`);
  const env = { ...secrets, ...backend.env };
  // One user's streams need one user; one user each needs as many as subscribers.
  const count = fanoutModes.includes('distinct') ? Math.max(...plan.subscriberCounts) : 1;
  const users = await seedUsers(dataDir, env, count);
  for (const subscribers of plan.subscriberCounts) {
    for (const mode of fanoutModes) {
      // One user's streams: the streams floor first, on the same machine a moment before (--no-streams-floor skips it;
      // a quick run of everything skips it too, to stay within its time limit, unless --streams-floor).
      // The same load for the floor and for the real server.
      const load = {
        dataDir,
        users,
        subscribers,
        mode,
        rate: FANOUT_RATE,
        seconds: plan.fanoutSeconds,
        warmupSeconds: plan.fanoutWarmup,
        contentBytes: CONTENT_BYTES,
        rssLimitMb: 1500,
        graceMs: plan.graceMs,
      };
      let floor: FanoutResult | null | undefined;
      if (mode === 'shared' && withStreamsFloor) {
        floor = await runFanout({
          ...load,
          env: { FLOOR_SLICE_MS: flag('floor-slice-ms') ?? '10' },
          floor: true,
        }).catch((err) => {
          results.failures.push(`streams floor before ${backend.name} ${subscribers}: ${String(err).slice(0, 300)}`);
          return null;
        });
      }
      try {
        const r = await runFanout({
          ...load,
          env: { ...env, EVENTS_MAX_STREAMS_PER_USER: String(Math.max(20, subscribers)), ...serverEnv },
          clientProfDir: flag('client-profile'),
        });
        results.fanout.push({ backend: backend.name, ...r, ...(floor !== undefined ? { floor } : {}) });
      } catch (err) {
        results.failures.push(`fan-out ${backend.name} ${subscribers} ${mode}: ${String(err).slice(0, 300)}`);
      }
    }
  }
}

/** Knowledge retrieval quality and speed (bench/lib/knowledge.ts) on one backend. */
async function knowledgeScenarios(backend: Backend) {
  const server = await startRealServer({
    dataDir: dir(`${backend.name}-knowledge`),
    env: { ...secrets, ...backend.env },
  });
  try {
    const user = await createBenchUser(server.base);
    results.knowledge.push(
      await runKnowledgeBench({
        backend: backend.name,
        base: server.base,
        apiKey: user.apiKey,
        seconds: quick ? 6 : 15,
      }),
    );
  } finally {
    noteCrash(server);
    await server.stop();
  }
}

/** Issue 20: one user uploads and crawls the worst files while another reads GET /api/auth. */
async function isolationScenario(backend: Backend) {
  const server = await startRealServer({
    dataDir: dir(`${backend.name}-isolation`),
    env: { ...secrets, ...backend.env, CRAWL_ALLOW_PRIVATE: '1' },
  });
  try {
    const attacker = await createBenchUser(server.base);
    const victim = await createBenchUser(server.base);
    results.isolation!.push(
      await runUploadIsolation({
        backend: backend.name,
        base: server.base,
        attackerJwt: attacker.jwt,
        victimJwt: victim.jwt,
        seconds: quick ? 15 : 60,
      }),
    );
  } finally {
    noteCrash(server);
    await server.stop();
  }
}

/** One server per scenario under node --cpu-prof, loaded as in the measured run. */
async function profiles(backends: Backend[]) {
  /** --profiles=fanout profiles only the fan-out, --profiles=objects only the object routes (while iterating on one). */
  const routes = flag('profiles') === 'fanout' ? [] : ['PUT /api/objects', 'GET /api/objects/{id}'];
  for (const backend of backends) for (const route of routes) await profileRoute(backend, route);
  if (flag('profiles') === 'objects') return;
  const subscribers = Math.min(...plan.subscriberCounts);
  const profDir = dir('profile');
  const dataDir = dir('profile-fanout');
  const users = await seedUsers(dataDir, secrets, 1);
  const env = { ...secrets, EVENTS_MAX_STREAMS_PER_USER: String(subscribers), ...serverEnv };
  const r = await runFanout({
    dataDir,
    env,
    users,
    subscribers,
    mode: 'shared',
    rate: FANOUT_RATE,
    seconds: plan.fanoutSeconds,
    warmupSeconds: plan.fanoutWarmup,
    contentBytes: CONTENT_BYTES,
    rssLimitMb: 1500,
    graceMs: plan.graceMs,
    cpuProfDir: profDir,
  });
  // The writes only (not the 5,000 connections' set-up).
  results.profiles[`fan-out: ${subscribers} streams of one user, ${FANOUT_RATE} events/s`] = summarizeProfile(
    findProfile(profDir),
    15,
    r.writesWindow,
  );
  const keep = flag('keep-profiles');
  if (keep) {
    mkdirSync(keep, { recursive: true });
    copyFileSync(findProfile(profDir), join(keep, `fanout-${subscribers}.cpuprofile`));
  }
}

/** One object route under node --cpu-prof on one backend, loaded as in the measured run. */
async function profileRoute(backend: Backend, route: string) {
  const profDir = dir('profile');
  const server = await startRealServer({
    dataDir: dir('profile-data'),
    env: { ...secrets, ...backend.env },
    cpuProfDir: profDir,
  });
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  let window: { fromUs: number; toUs: number } | undefined;
  try {
    const user = await createBenchUser(server.base);
    const body = objectBody(user.keyId, CONTENT_BYTES);
    const ids = route.startsWith('PUT') ? [] : await prefillObjects(server.base, user.jwt, body, plan.prefill);
    // Only the measured load counts in the summary (not start-up, user set-up or warm-up): V8 stamps samples with CLOCK_MONOTONIC, as hrtime does.
    const fromUs = nowUs() + plan.warmup * 1e6;
    if (route.startsWith('PUT'))
      await load(server, {
        url: `${server.base}/api/objects`,
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${user.apiKey}` },
        body,
      });
    else
      await load(server, {
        url: server.base,
        method: 'GET',
        headers: { authorization: `Bearer ${user.jwt}` },
        paths: ids.map((id) => `/api/objects/${id}`),
      });
    window = { fromUs, toUs: nowUs() };
  } finally {
    noteCrash(server);
    await server.stop();
  }
  results.profiles[backend.name === 'sqlite' ? route : `${backend.name}: ${route}`] = summarizeProfile(
    findProfile(profDir),
    15,
    window,
  );
  const keep = flag('keep-profiles');
  if (keep) {
    mkdirSync(keep, { recursive: true });
    copyFileSync(findProfile(profDir), join(keep, `${backend.name}-${route.replace(/[^A-Za-z]+/g, '-')}.cpuprofile`));
  }
}

async function main() {
  ensureFileLimit(Math.max(...plan.subscriberCounts) * 2 + 1000);
  const hardStop = setTimeout(() => {
    console.error(`bench: hard time limit of ${plan.hardLimitS} s reached; stopping`);
    killAll();
    process.exit(1);
  }, plan.hardLimitS * 1000);
  hardStop.unref();
  if (!args.includes('--no-build')) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed (use --no-build to measure the existing dist/)');
  }

  const backends: Backend[] = [];
  if (!backendNames || backendNames.includes('sqlite')) backends.push({ name: 'sqlite', env: {} });
  const wantPostgres = backendNames ? backendNames.includes('postgres') : !quick;
  if (process.env.DATABASE_URL && wantPostgres) backends.push(await postgresBackend(process.env.DATABASE_URL));
  else if (wantPostgres && backendNames) throw new Error('--backend=postgres needs DATABASE_URL');
  else if (process.env.DATABASE_URL)
    console.log('bench: --quick measures SQLite only; run without --quick (or with --backend=postgres) for PostgreSQL');
  try {
    if (only.includes('objects')) {
      const floor = await startFloorServer({ dataDir: dir('floor') });
      try {
        for (const backend of backends) await step(`objects on ${backend.name}`, () => objectScenarios(backend, floor));
      } finally {
        await floor.stop();
      }
    }
    if (only.includes('fanout'))
      for (const backend of backends) await step(`fan-out on ${backend.name}`, () => fanoutScenarios(backend));
    if (only.includes('knowledge'))
      for (const backend of backends) await step(`knowledge on ${backend.name}`, () => knowledgeScenarios(backend));
    if (only.includes('isolation'))
      for (const backend of backends) await step(`worst uploads on ${backend.name}`, () => isolationScenario(backend));
    if (only.includes('connect'))
      for (const backend of backends)
        await step(`connector ingestion on ${backend.name}`, () => ingestScenario(backend));
    if (plan.profile && only.includes('profiles')) await step('profiles', () => profiles(backends));
    // Call progress (bench/calls.ts, also runnable alone): 100 concurrent sandbox calls in one process.
    if (only.includes('calls'))
      for (const backend of backends)
        await step(`calls on ${backend.name}`, async () => {
          const file = join(
            ROOT,
            'bench',
            'results',
            `calls-${backend.name === 'postgres' ? 'postgres' : 'sqlite'}.json`,
          );
          rmSync(file, { force: true }); // figures of an earlier run must not pass for this one's
          const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/calls.ts', `--backend=${backend.name}`], {
            cwd: ROOT,
            stdio: 'inherit',
            env: process.env,
            timeout: 200_000,
          });
          if (existsSync(file)) {
            const c = JSON.parse(readFileSync(file, 'utf8'));
            (results.calls ??= []).push({
              backend: backend.name,
              calls: c.calls,
              eventsExpected: c.events.expected,
              eventsReceived: c.events.received,
              inOrder: c.events.sessionsWithAllFourInOrder,
              p99: c.reportToSubscriberMs.p99,
              webhooksExpected: c.callWebhooks.expected,
              webhooksVerified: c.callWebhooks.verified,
              deliveriesPerSecond: c.webhookBurst.perSecond,
            });
          }
          if (run.status !== 0)
            throw new Error(
              `bench/calls.ts on ${backend.name} did not pass (its output above; figures in bench/results/calls-${backend.name}.json)`,
            );
        });
    // Scenarios with a script of their own (each also runnable alone): its own servers per backend.
    // The voice agent's latency (bench/voice.ts): its fakes and callers.
    if (only.includes('voice'))
      for (const backend of backends)
        await step(`voice agent on ${backend.name}`, () => runScenarioFile('voice', backend.name, quick ? 640 : 1080));
    // The media sockets under attack (bench/attack.ts; issue 46): its attackers.
    if (only.includes('attack'))
      for (const backend of backends)
        await step(`media sockets under attack on ${backend.name}`, () =>
          runScenarioFile('attack', backend.name, quick ? 160 : 310),
        );
    // Analytics at 100,000 calls of one account (bench/analytics.ts; issue 40).
    if (only.includes('analytics'))
      for (const backend of backends)
        await step(`analytics at 100,000 calls on ${backend.name}`, () =>
          runScenarioFile('analytics', backend.name, quick ? 250 : 490),
        );
    // One campaign dialled by two instances on one PostgreSQL (bench/campaigns.ts; issue 41).
    if (only.includes('campaigns') && backends.some((b) => b.name === 'postgres'))
      await step('a campaign dialled by two instances on postgres', () =>
        runScenarioFile('campaigns', 'postgres', quick ? 300 : 700),
      );
    // Agent tests in text mode (bench/agent-tests.ts; issue 42): a suite of 200 six-turn tests beside another user.
    if (only.includes('agent-tests'))
      for (const backend of backends)
        await step(`agent tests on ${backend.name}`, () =>
          runScenarioFile('agent-tests', backend.name, quick ? 130 : 250),
        );
  } finally {
    for (const backend of backends) await backend.drop?.().catch(() => {});
  }
  if (loadWorker) await stop(loadWorker, 2000);
  const voiceChecks = results.checks;
  if (
    only.every((o) => o === 'voice' || o === 'attack' || o === 'agent-tests' || o === 'analytics' || o === 'campaigns')
  ) {
    // Only the voice agent and/or the attack: the "Voice agent" section of BENCHMARKS.md (when it ran), nothing else of the file or of latest.json.
    if (only.includes('voice')) {
      spliceVoiceSection(ROOT);
      console.log(
        `bench: wrote the "Voice agent" section of BENCHMARKS.md in ${Math.round((Date.now() - started) / 1000)} s`,
      );
    }
    for (const c of voiceChecks) console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value} (target ${c.target})`);
    for (const f of results.failures) console.log(`  failure: ${f}`);
    if (results.failures.length) process.exitCode = 1;
    return;
  }
  if (streamsOnly && only.every((o) => o === 'streams' || o === 'fanout')) {
    // Only one user's many streams: the "Event fan-out" section of BENCHMARKS.md, nothing else of it.
    results.durationSeconds = Math.round((Date.now() - started) / 1000);
    results.checks = checkTargets(results, Math.max(...plan.subscriberCounts));
    spliceFanoutSection(ROOT, results);
    console.log(
      `bench: wrote the "Event fan-out" section of BENCHMARKS.md and bench/results/streams-latest.json in ${results.durationSeconds} s`,
    );
    for (const f of results.fanout.filter((x) => x.floor))
      console.log(
        `  ${f.backend} ${f.subscribers} streams of one user: floor p50 / p99 ${f.floor!.p50} / ${f.floor!.p99} ms (server CPU ${f.floor!.serverCpuPct}%), server ${f.p50} / ${f.p99} ms (CPU ${f.serverCpuPct}%)`,
      );
    for (const c of results.checks)
      console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value} (target ${c.target})`);
    for (const f of results.failures) console.log(`  failure: ${f}`);
    if (results.failures.length) process.exitCode = 1;
    return;
  }
  // The regression guard (bench/lib/baseline.ts): CPU µs per request against the last accepted run.
  const guard = baselineChecks(results, readBaseline(ROOT));
  results.checks = [...checkTargets(results, Math.max(...plan.subscriberCounts)), ...guard.checks, ...voiceChecks];
  results.durationSeconds = Math.round((Date.now() - started) / 1000);
  // writeResults rewrites the file: the campaigns section (written from bench/campaigns.ts's run) is carried over as it was.
  const campaignsSection = markedSection(ROOT, '<!-- campaigns -->', '<!-- /campaigns -->');
  writeResults(ROOT, results);
  spliceAnalyticsSection(ROOT);
  spliceVoiceSection(ROOT);
  if (campaignsSection) appendFileSync(join(ROOT, 'BENCHMARKS.md'), `\n${campaignsSection}\n`);
  console.log(`bench: wrote BENCHMARKS.md and bench/results/latest.json in ${results.durationSeconds} s`);
  for (const c of results.checks)
    console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value} (target ${c.target})`);
  for (const f of results.failures) console.log(`  failure: ${f}`);
  if (args.includes('--accept-baseline')) {
    const accepted = acceptBaseline(ROOT, results);
    console.log(
      `bench: accepted this run's CPU µs per request as the baseline of ${accepted.length} scenario(s) in bench/baseline.json: commit it`,
    );
  } else {
    const baseline = readBaseline(ROOT);
    const unguarded = results.objects.filter((o) => o.figures && !baseline.scenarios[`${o.backend}: ${o.scenario}`]);
    if (unguarded.length)
      console.log(
        `bench: no accepted CPU µs per request for ${unguarded.map((o) => `${o.backend}: ${o.scenario}`).join('; ')}: run on a quiet machine with --accept-baseline and commit bench/baseline.json`,
      );
    shout(guard.regressions);
    // A quick run is a smoke run (short windows, SQLite only): it says so, a full run fails on it.
    if (guard.regressions.length && !quick) process.exitCode = 1;
  }
}

/**
 * Runs bench/<script>.ts on one backend as a child process (--backend, --no-build, --quick passed on), then
 * collects the checks it wrote to bench/results/<script>-<backend>.json as "<backend>: <script, spaced>: <check>".
 * A non-zero exit (or the time limit) fails the step after its checks are collected.
 */
async function runScenarioFile(script: string, backend: string, limitS: number): Promise<void> {
  const label = script.replace('-', ' ');
  const file = join(ROOT, 'bench', 'results', `${script}-${backend}.json`);
  rmSync(file, { force: true }); // figures of an earlier run must not pass for this one's
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', `bench/${script}.ts`, `--backend=${backend}`, '--no-build', ...(quick ? ['--quick'] : [])],
    { cwd: ROOT, stdio: 'inherit', env: process.env, timeout: limitS * 1000 },
  );
  if (existsSync(file))
    for (const c of JSON.parse(readFileSync(file, 'utf8')).checks as Array<Check & { value: unknown }>)
      results.checks.push({
        ...c,
        name: `${backend}: ${label}: ${c.name}`,
        value: c.value === null ? '\u2013' : String(c.value),
      });
  if (run.status !== 0)
    throw new Error(
      `bench/${script}.ts on ${backend} did not pass (its output above; figures in bench/results/${script}-${backend}.json)`,
    );
}

async function step(name: string, fn: () => Promise<void>) {
  const t0 = Date.now();
  console.log(`bench: ${name}…`);
  try {
    await fn();
  } catch (err) {
    results.failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500));
  }
  console.log(`bench: ${name} done in ${Math.round((Date.now() - t0) / 1000)} s`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => (killAll(), process.exit(130)));
// Runs on every exit (done, failed, hard limit, Ctrl-C): no child or temp dir outlives the run.
process.on('exit', () => {
  killAll();
  rmSync(tmp, { recursive: true, force: true });
});
main().catch((err) => {
  console.error(err);
  killAll();
  process.exit(1);
});

/** The text of BENCHMARKS.md between two markers (both included), or null. */
function markedSection(root: string, start: string, end: string): string | null {
  const path = join(root, 'BENCHMARKS.md');
  if (!existsSync(path)) return null;
  const text = readFileSync(path, 'utf8');
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  return from >= 0 && to > from ? text.slice(from, to + end.length) : null;
}
