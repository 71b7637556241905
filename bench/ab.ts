// A/B of two builds in one run: `npx tsx bench/ab.ts --before=<a build's dist dir> [--rounds=3] [--seconds=3]
// [--backend=sqlite|postgres] [--after-flags="--max-semi-space-size=16"]`. Starts both servers side by side and
// alternates the same loads on them (50 connections, GET /api/objects/{id} with a JWT and PUT /api/objects with an
// API key), so both see the same machine; reports server CPU µs per request and req/s per round and the after/before
// ratios of the medians. For a busy machine, where absolute figures mean little and the order of runs matters.
//   a build of an older commit: git worktree add /tmp/before <commit> && cd /tmp/before && ln -s <repo>/node_modules && npm run build
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { LoadJob, LoadResult } from './workers/load.js';
import { cpuUsPerRequest } from './lib/baseline.js';
import { ROOT, forkTs, killAll, request, stop, withCpu } from './lib/proc.js';
import { type RunningServer, startRealServer } from './lib/server.js';
import { createBenchUser, objectBody, prefillObjects } from './lib/setup.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const before = flag('before');
if (!before) throw new Error('--before=<a build dir holding server.js or src/main.js> is required');
const rounds = Number(flag('rounds') ?? 3);
const seconds = Number(flag('seconds') ?? 3);
const backend = flag('backend') ?? 'sqlite';
// Node flags for the "after" server only, after npm start's (an A/B of runtime flags: --before=dist for this build).
const afterFlags = flag('after-flags')?.split(' ').filter(Boolean) ?? [];
if (backend === 'postgres' && !process.env.DATABASE_URL) throw new Error('--backend=postgres needs DATABASE_URL');

const tmp = mkdtempSync(join(tmpdir(), 'wsapi-ab-'));
const secrets = { MASTER_KEY: randomBytes(32).toString('base64'), JWT_SECRET: randomBytes(48).toString('base64url') };
process.on('exit', () => {
  killAll();
  rmSync(tmp, { recursive: true, force: true });
});

async function prepare(name: string, entry: string | undefined) {
  // Each build on its own database (PostgreSQL: its own schema through search_path), so neither reads the other's rows.
  const env: Record<string, string> = { ...secrets };
  if (backend === 'postgres') {
    const url = new URL(process.env.DATABASE_URL!);
    const pg = (await import('pg')).default;
    const schema = `ab_${name}_${randomBytes(3).toString('hex')}`;
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  const server = await startRealServer({
    dataDir: join(tmp, name),
    env,
    entry,
    timeoutMs: 90_000,
    nodeFlags: name === 'after' ? afterFlags : [],
  });
  const user = await createBenchUser(server.base);
  const body = objectBody(user.keyId, 1024);
  const ids = await prefillObjects(server.base, user.jwt, body, 300);
  const jobs: Record<string, Omit<LoadJob, 'type' | 'connections' | 'warmupSeconds' | 'seconds'>> = {
    'GET /api/objects/{id}': {
      url: server.base,
      method: 'GET',
      headers: { authorization: `Bearer ${user.jwt}` },
      paths: ids.map((id) => `/api/objects/${id}`),
    },
    'PUT /api/objects': {
      url: `${server.base}/api/objects`,
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.apiKey}` },
      body,
    },
  };
  return { name, server, jobs };
}

const loader = forkTs('bench/workers/load.ts');
async function measure(
  server: RunningServer,
  job: Omit<LoadJob, 'type' | 'connections' | 'warmupSeconds' | 'seconds'>,
) {
  const full: LoadJob = { type: 'run', connections: 50, warmupSeconds: 1, seconds, ...job };
  const { value, cpuPct } = await withCpu(server.pid, () =>
    request<LoadResult>(loader, full, 'result', (seconds + 30) * 1000),
  );
  return {
    rps: value.rps,
    cpuUs: cpuUsPerRequest({ rps: value.rps, p50: value.p50, p99: value.p99, errors: 0, serverCpuPct: cpuPct }),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sides = [
  await prepare(
    'before',
    relative(ROOT, existsSync(join(before, 'server.js')) ? join(before, 'server.js') : join(before, 'src', 'main.js')),
  ),
  await prepare('after', undefined),
];
const figures: Record<string, Record<string, { rps: number[]; cpuUs: number[] }>> = {};
for (let round = 0; round < rounds; round++) {
  for (const scenario of Object.keys(sides[0].jobs)) {
    // Alternate which build goes first, so neither always meets the machine in the same state.
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const r = await measure(side.server, side.jobs[scenario]);
      const slot = ((figures[scenario] ??= {})[side.name] ??= { rps: [], cpuUs: [] });
      slot.rps.push(r.rps);
      if (r.cpuUs !== null) slot.cpuUs.push(r.cpuUs);
      console.log(`round ${round + 1} ${scenario} ${side.name}: ${r.rps} req/s, ${r.cpuUs} CPU µs/request`);
    }
  }
}
console.log(`\nA/B on ${backend}, ${rounds} rounds of ${seconds} s, medians (after ÷ before):`);
for (const [scenario, s] of Object.entries(figures)) {
  const cpu = [median(s.before.cpuUs), median(s.after.cpuUs)];
  const rps = [median(s.before.rps), median(s.after.rps)];
  console.log(
    `  ${scenario}: CPU µs/request ${cpu[0]} → ${cpu[1]} (${(cpu[1] / cpu[0]).toFixed(2)}×); req/s ${rps[0]} → ${rps[1]} (${(rps[1] / rps[0]).toFixed(2)}×)`,
  );
}
await stop(loader, 2000);
for (const side of sides) await side.server.stop();
process.exit(0);
