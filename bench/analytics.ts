// npx tsx bench/analytics.ts [--quick] [--backend=sqlite|postgres] [--no-build]   (also: npm run bench -- --only=analytics)
// GET /api/analytics/calls at 100,000 calls of one account (issue 40), on the
// real server (node dist/server.js), all traffic on 127.0.0.1: the call rows
// are written straight into the database before the server starts (as the
// calls and analysis services leave them: outcomes, success, cost, latency,
// agents, campaigns, spread over 90 days), with another account's 20,000
// calls beside them. Then each grouping (day in Europe/Berlin, agent,
// campaign, outcome, direction) and the filtered day view are asked for one
// after another over the whole 90 days; p50 and p99 per grouping, target p99
// < 100 ms. A floor in the same run: the same request over a day without
// calls (auth, the route, the zone's offsets, an empty read), asked as often,
// so a loaded machine shows in both. Writes
// bench/results/analytics-<backend>.json and, in full mode, the "Analytics"
// section of BENCHMARKS.md (bench/lib/analytics-report.ts). Stops by itself.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import { tallyOf } from '../src/modules/analysis/tally.js';
import { spliceAnalyticsSection } from './lib/analytics-report.js';
import { createBenchSchema } from './lib/pg-schema.js';
import { ROOT, forkTs, freePort, killAll, request, stop } from './lib/proc.js';
import { startRealServer } from './lib/server.js';
import type { SeededUser } from './seed.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const backend = flag('backend') ?? 'sqlite';
const CALLS = 100_000;
const OTHER_CALLS = 20_000;
const DAYS = 90;
const DAY_MS = 86_400_000;
const REQUESTS = quick ? 40 : 200;
const TARGET_P99_MS = 100;
const hardStop = setTimeout(
  () => {
    console.error('bench/analytics: hard time limit reached');
    killAll();
    process.exit(1);
  },
  (quick ? 240 : 480) * 1000,
);
hardStop.unref();

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? Math.round(sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10 : null;
};

/** Call i of an account: a deterministic spread of outcomes, agents, campaigns and figures. */
function callRow(userId: string, i: number, count: number, start: number) {
  const at = start + Math.floor((i * DAYS * DAY_MS) / count) + (i % 13) * 60_000;
  const kind = i % 10;
  const outcome =
    kind < 5
      ? 'completed'
      : kind < 7
        ? 'voicemail'
        : kind === 7
          ? 'transferred'
          : kind === 8
            ? 'no_answer'
            : 'provider_error';
  const status = outcome === 'no_answer' ? 'no_answer' : outcome === 'provider_error' ? 'failed' : 'completed';
  const talked = outcome === 'completed' || outcome === 'transferred';
  return {
    id: newId(at),
    user_id: userId,
    direction: i % 4 === 0 ? 'inbound' : i % 4 === 1 ? 'web' : 'outbound',
    status,
    webhook_url: null,
    summary: JSON.stringify({ agent: { name: `agent-${i % 20}` } }),
    provider_call_id: null,
    duration_seconds: talked ? 30 + (i % 240) : outcome === 'voicemail' ? 25 : 0,
    finished_at: at + 60_000,
    record_object_id: null,
    outcome,
    answered_at: status === 'completed' ? at + 5000 : null,
    agent_id: `agent-${i % 20}`,
    campaign_id: i % 3 === 0 ? `campaign-${i % 12}` : null,
    success: talked ? (i % 3 === 1 ? 0 : 1) : status === 'completed' ? 0 : null,
    cost_cents: status === 'completed' ? 2 + (i % 30) : 0,
    latency_p50_ms: talked ? 400 + ((i * 37) % 600) : null,
    latency_p95_ms: talked ? 700 + ((i * 53) % 1500) : null,
    analysis_status: talked ? 'completed' : 'skipped',
    created_at: at,
    updated_at: at + 60_000,
  };
}

/** The row with its tally, as the analysis job writes it. */
function tallied<R extends { status: string; outcome: string; answered_at: number | null; success: number | null }>(
  row: R,
) {
  return {
    ...row,
    tally: tallyOf({
      status: row.status,
      outcome: row.outcome,
      answeredAt: row.answered_at,
      ended: true,
      success: row.success === null ? null : row.success === 1,
    }),
  };
}

async function insertCalls(env: Record<string, string>, dir: string, users: SeededUser[], start: number) {
  const database = openDatabase({ databaseUrl: env.DATABASE_URL ?? null, dataDir: dir, pgPoolSize: 2 });
  try {
    for (const [user, count] of [
      [users[0]!, CALLS],
      [users[1]!, OTHER_CALLS],
    ] as const) {
      const rows = Array.from({ length: count }, (_, i) => tallied(callRow(user.id, i, count, start)));
      // SQLite's bound variables per statement (and PostgreSQL's 65,535) limit a batch.
      for (let i = 0; i < rows.length; i += 1000)
        await database.db.transaction().execute((tx) =>
          tx
            .insertInto('call_sessions')
            .values(rows.slice(i, i + 1000))
            .execute(),
        );
    }
    // Steady state: statistics for the planner, and on PostgreSQL the visibility map that lets it read the index only
    // (autovacuum does both on its own a little after a bulk insert).
    await sql.raw(database.dialect === 'postgres' ? 'vacuum analyze call_sessions' : 'analyze').execute(database.db);
  } finally {
    await database.close();
  }
}

async function timed(base: string, token: string, path: string): Promise<{ ms: number; body: unknown }> {
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return { ms, body };
}

async function main() {
  if (!args.includes('--no-build')) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed (use --no-build to measure the existing dist/)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-bench-analytics-'));
  const pgSchema = await createBenchSchema(backend, 'bench_analytics');
  const port = await freePort();
  const env: Record<string, string> = {
    MASTER_KEY: randomBytes(32).toString('base64'),
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ...(pgSchema.urlWithSchema ? { DATABASE_URL: pgSchema.urlWithSchema } : {}),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  };
  const seeder = forkTs('bench/seed.ts', [], {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const users = (await request<{ users: SeededUser[] }>(seeder, { type: 'seed', count: 2 }, 'seeded', 120_000)).users;
  const end = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const start = end - DAYS * DAY_MS;
  const seedStarted = performance.now();
  await insertCalls(env, dir, users, start);
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  const server = await startRealServer({ dataDir: dir, env, port });
  const failures: string[] = [];
  try {
    const from = new Date(start).toISOString().slice(0, 10);
    const to = new Date(end - DAY_MS).toISOString().slice(0, 10);
    const range = `from=${from}&to=${to}&tz=Europe%2FBerlin`;
    const queries: Array<[string, string]> = [
      ['day', `groupBy=day&${range}`],
      ['agent', `groupBy=agent&${range}`],
      ['campaign', `groupBy=campaign&${range}`],
      ['outcome', `groupBy=outcome&${range}`],
      ['direction', `groupBy=direction&${range}`],
      ['day, one agent', `groupBy=day&agentId=agent-3&${range}`],
      ['day, one campaign', `groupBy=day&campaignId=campaign-3&${range}`],
    ];
    const token = users[0]!.token;
    // Correct before fast: every call of the account counted once, none of the other's.
    const check = (await timed(server.base, token, `/api/analytics/calls?from=${from}&to=${to}`)).body as {
      totals: { calls: number };
      buckets: unknown[];
    };
    const inRange = Array.from({ length: CALLS }, (_, i) => callRow(users[0]!.id, i, CALLS, start)).filter(
      (r) => r.created_at < end,
    ).length;
    if (check.totals.calls !== inRange)
      failures.push(`the whole range counted ${check.totals.calls} calls, not ${inRange}`);
    // Warm-up: each query a few times (the server's first requests compile its code).
    for (const [, q] of queries)
      for (let i = 0; i < 5; i++) await timed(server.base, token, `/api/analytics/calls?${q}`);
    // The floor: a day a year before the calls, in the same zone and grouping as the first query.
    const empty = new Date(start - 365 * DAY_MS).toISOString().slice(0, 10);
    const floorQuery = `groupBy=day&from=${empty}&to=${empty}&tz=Europe%2FBerlin`;
    for (let i = 0; i < 5; i++) await timed(server.base, token, `/api/analytics/calls?${floorQuery}`);
    const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
    const rows = [];
    for (const [name, q] of [['floor (no calls)', floorQuery] as [string, string], ...queries]) {
      const ms: number[] = [];
      for (let i = 0; i < REQUESTS; i++) ms.push((await timed(server.base, token, `/api/analytics/calls?${q}`)).ms);
      rows.push({
        grouping: name,
        requests: ms.length,
        p50Ms: percentile(ms, 50),
        p99Ms: percentile(ms, 99),
        maxMs: percentile(ms, 100),
      });
    }
    const checks = rows.slice(1).map((r) => ({
      name: `GET /api/analytics/calls ${r.grouping} at ${CALLS.toLocaleString('en-US')} calls, p99`,
      value: r.p99Ms,
      target: `< ${TARGET_P99_MS} ms`,
      met: r.p99Ms !== null && r.p99Ms < TARGET_P99_MS,
    }));
    const report = {
      backend,
      quick,
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, load: loadavg().map((l) => Math.round(l * 100) / 100), loadAtStart },
      calls: CALLS,
      otherAccountCalls: OTHER_CALLS,
      days: DAYS,
      seedSeconds,
      rows,
      checks,
      failures,
    };
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    const file = join(ROOT, 'bench', 'results', `analytics-${backend}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    // Quick runs (a check that it works) leave BENCHMARKS.md as it is.
    if (!quick) spliceAnalyticsSection(ROOT);
    console.log(
      `bench/analytics (${backend}${quick ? ', quick' : ''}): ${CALLS} calls of one account over ${DAYS} days (+${OTHER_CALLS} of another), seeded in ${seedSeconds} s, ${REQUESTS} requests per grouping, load ${report.machine.load.join(' ')}`,
    );
    for (const r of rows)
      console.log(`  ${r.grouping.padEnd(18)} p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms`);
    for (const c of checks) console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value} (target ${c.target})`);
    console.log(`bench/analytics: wrote ${file}`);
    if (checks.some((c) => !c.met)) failures.push('a grouping missed its target');
  } finally {
    await server.stop().catch(() => {});
    await stop(seeder, 2000); // it exits by itself once it has seeded
    await pgSchema.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) {
    for (const f of failures) console.log(`  failure: ${f}`);
    process.exitCode = 1;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => (killAll(), process.exit(130)));
process.on('exit', () => killAll());
main().catch((err) => {
  console.error(err);
  killAll();
  process.exit(1);
});
