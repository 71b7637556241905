// npx tsx bench/campaigns.ts [--quick] [--contacts=N] [--rate=N]   (PostgreSQL: DATABASE_URL; all traffic on 127.0.0.1)
// Issue 41's benchmark: one sandbox campaign (2,000 contacts at 600 calls a
// minute; --quick: 200) dialled by two server processes on one PostgreSQL,
// calls carried by the quick timer sandbox (AUDIO_SANDBOX_STEP_MS=500: a call
// rings, talks and ends in about 2 s; one contact in ten rings out). Checks:
// the dialling rate (calls recorded per minute over the campaign, first to
// last) within 5% of the pacing, no contact dialled twice, every contact in a
// final status. CPU: both processes' CPU over the campaign (per call placed);
// the dialer's own CPU while dialling, apart from carrying the calls (its
// rounds, placings and end decisions, counted by bench/lib/dialer-cpu.ts
// preloaded into both processes); and the dialer's polling (two instances with
// a campaign running whose contacts are all outside business hours: every
// round claims nothing).
// Writes bench/results/campaigns-postgres.json. Stops by itself.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createBenchSchema } from './lib/pg-schema.js';
import { ROOT, cpuSeconds, freePort, killAll, sleep } from './lib/proc.js';
import { type RunningServer, startRealServer } from './lib/server.js';
import { createBenchUser } from './lib/setup.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const CONTACTS = Number(flag('contacts') ?? (quick ? 200 : 2000));
const RATE = Number(flag('rate') ?? 600);
const IDLE_SECONDS = quick ? 10 : 30;
const hardStop = setTimeout(
  () => {
    console.error('bench/campaigns: hard time limit reached');
    killAll();
    process.exit(1);
  },
  (120 + (CONTACTS / RATE) * 60 * 2 + IDLE_SECONDS) * 1000,
);
hardStop.unref();

async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** $100 of credit and a sandbox number, through the sandbox checkout pages as a customer would. */
async function fundAndBuy(base: string, token: string): Promise<string> {
  for (let i = 0; i < 2; i++) {
    const { url } = await call(base, token, 'POST', '/api/credits/add?amount=50');
    await fetch(url, { method: 'POST' });
  }
  const found = await call(base, token, 'GET', '/api/phone-numbers/search/sandbox?country=US&type=local');
  const jwt = found.find((n: { capabilities: { voice: boolean } }) => n.capabilities.voice).price.jwt;
  const first = await fetch(`${base}/api/phone-numbers`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jwt }),
  });
  const answer = (await first.json()) as { id?: string; checkoutUrl?: string };
  // A card already on file (the top-up saved one): bought at once; else the checkout page saves one first.
  if (first.status < 300 && answer.id) return answer.id;
  if (!answer.checkoutUrl) throw new Error(`buying a number answered ${first.status}: ${JSON.stringify(answer)}`);
  await fetch(answer.checkoutUrl, { method: 'POST' });
  return (await call(base, token, 'PUT', '/api/phone-numbers', { jwt })).id;
}

type DialerCpu = {
  cpuUs: number;
  byPart: Record<'round' | 'place' | 'callFinished', number>;
  counts?: Record<'round' | 'place' | 'callFinished', number>;
};
/** The dialer's own CPU so far (µs) in the server whose data dir is `dir` (written by bench/lib/dialer-cpu.ts). */
function dialerCpu(dir: string): DialerCpu {
  const file = join(dir, 'dialer-cpu.json');
  return existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as DialerCpu)
    : { cpuUs: 0, byPart: { round: 0, place: 0, callFinished: 0 } };
}
const dialerCpuSeconds = (dir: string) => dialerCpu(dir).cpuUs / 1e6;

/** Distinct US numbers; one in ten ends in 0000 (the sandbox's unanswered callee). */
const contacts = (n: number, tag: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: `Contact ${i}`,
    phone:
      i % 10 === 9
        ? `+1415${String(Math.floor(i / 10)).padStart(3, '0')}0000`
        : `+1212${tag}${String(i + 100_001).slice(-6)}`,
  }));

async function main() {
  const schema = await createBenchSchema('postgres', 'bench_campaigns');
  const dirs = [
    mkdtempSync(join(tmpdir(), 'wsapi-bench-campaigns-a-')),
    mkdtempSync(join(tmpdir(), 'wsapi-bench-campaigns-b-')),
  ];
  const env: Record<string, string> = {
    MASTER_KEY: randomBytes(32).toString('base64'),
    JWT_SECRET: randomBytes(48).toString('base64url'),
    DATABASE_URL: schema.urlWithSchema!,
    SANDBOX_CALLS: 'timer',
    AUDIO_SANDBOX_STEP_MS: '500',
    CALL_CONCURRENCY_PER_USER: '500',
    CALL_MAX_SECONDS: '60',
  };
  const servers: RunningServer[] = [];
  const db = new pg.Client({ connectionString: schema.urlWithSchema });
  const result: Record<string, unknown> = {
    contacts: CONTACTS,
    rate: RATE,
    cpus: cpus().length,
    loadBefore: loadavg()[0],
  };
  const failures: string[] = [];
  try {
    for (const dir of dirs) {
      const port = await freePort();
      servers.push(
        await startRealServer({
          dataDir: dir,
          port,
          env: { ...env, PUBLIC_URL: `http://127.0.0.1:${port}`, BENCH_DIALER_CPU_FILE: join(dir, 'dialer-cpu.json') },
          entry: 'src/main.ts',
          nodeFlags: ['--import', 'tsx', '--import', pathToFileURL(join(ROOT, 'bench', 'lib', 'dialer-cpu.ts')).href],
          timeoutMs: 60_000,
        }),
      );
    }
    const [a, b] = servers as [RunningServer, RunningServer];
    const user = await createBenchUser(a.base);
    const numberId = await fundAndBuy(a.base, user.jwt);
    await db.connect();

    // The dialer's own polling: a running campaign with every contact outside its hours, on both instances.
    const today = new Date().getUTCDay();
    const closed = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(today + 3) % 7];
    const idle = await call(a.base, user.jwt, 'POST', '/api/campaigns', {
      name: 'Idle',
      agent: { name: 'Amy' },
      fromNumberIds: [numberId],
      contacts: contacts(100, 1),
      schedule: { timezone: 'UTC', days: [closed] },
    });
    await call(a.base, user.jwt, 'POST', `/api/campaigns/${idle.id}/start`);
    await sleep(1000);
    const idleCpu0 = servers.map((s) => cpuSeconds(s.pid) ?? 0);
    await sleep(IDLE_SECONDS * 1000);
    const idleCpu = servers.map(
      (s, i) => Math.round((((cpuSeconds(s.pid) ?? 0) - idleCpu0[i]!) / IDLE_SECONDS) * 1000) / 10,
    );

    await call(a.base, user.jwt, 'POST', `/api/campaigns/${idle.id}/cancel`);
    result.idleDialerCpuPct = idleCpu;

    // The campaign.
    const created = await call(a.base, user.jwt, 'POST', '/api/campaigns', {
      name: 'Bench',
      agent: { name: 'Amy' },
      fromNumberIds: [numberId],
      contacts: contacts(CONTACTS, 2),
      pacing: { callsPerMinute: RATE, maxConcurrent: 500 },
      retry: { maxAttempts: 1 },
    });
    // The dialer's CPU meter on from here (its hooks would weigh on the polling figure above).
    for (const s of servers) process.kill(s.pid, 'SIGUSR2');
    await sleep(600); // a fresh reading of the dialer's CPU (written every 500 ms)
    const cpu0 = servers.map((s) => cpuSeconds(s.pid) ?? 0);
    const dialer0 = dirs.map(dialerCpuSeconds);
    const parts0 = dirs.map(dialerCpu);
    const started = performance.now();
    await call(b.base, user.jwt, 'POST', `/api/campaigns/${created.id}/start`);
    let view: { status: string; counts: Record<string, number>; attempts: number } | null = null;
    for (;;) {
      await sleep(1000);
      view = await call(a.base, user.jwt, 'GET', `/api/campaigns/${created.id}`);
      for (const s of servers) if (s.crash()) throw new Error(s.crash()!);
      if (view!.status !== 'running') break;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = servers.map((s, i) => (cpuSeconds(s.pid) ?? 0) - cpu0[i]!);
    await sleep(600);
    const dialer = dirs.map((d, i) => dialerCpuSeconds(d) - dialer0[i]!);
    const parts1 = dirs.map(dialerCpu);
    const partMsPerCall = (part: keyof DialerCpu['byPart']) =>
      Math.round(
        (parts1.reduce((n, p, i) => n + p.byPart[part] - parts0[i]!.byPart[part], 0) /
          1000 /
          Math.max(1, times.length)) *
          10,
      ) / 10;
    const { rows: times } = await db.query(
      'select created_at from call_sessions where campaign_id = $1 order by created_at',
      [created.id],
    );
    const { rows: twice } = await db.query(
      'select idx, count(*) as n from campaign_attempts where campaign_id = $1 group by idx having count(*) > 1',
      [created.id],
    );
    const first = Number(times[0]?.created_at ?? 0);
    const last = Number(times.at(-1)?.created_at ?? 0);
    // Pacing lost to stalls: a late round catches up at most burstMs, 1 s (docs/decisions/campaigns.md, pacing.ts).
    const gaps = times.slice(1).map((t, i) => Number(t.created_at) - Number(times[i]!.created_at));
    const interval = 60_000 / RATE;
    const perMinute = times.length > 1 ? ((times.length - 1) / (last - first)) * 60_000 : 0;
    Object.assign(result, {
      status: view!.status,
      counts: view!.counts,
      calls: times.length,
      seconds: Math.round(seconds * 10) / 10,
      dialledPerMinute: Math.round(perMinute * 10) / 10,
      rateError: Math.round((Math.abs(perMinute - RATE) / RATE) * 1000) / 10,
      dialledTwice: twice.length,
      longestGapMs: gaps.length ? Math.max(...gaps) : null,
      slotsLostToStalls: Math.round(gaps.reduce((n, g) => n + Math.max(0, g - 1000 - interval) / interval, 0)),
      serverCpuPct: cpu.map((c) => Math.round((c / seconds) * 1000) / 10),
      cpuMsPerCall: Math.round(((cpu[0]! + cpu[1]!) / Math.max(1, times.length)) * 10000) / 10,
      // The dialer's own part of that (rounds, placings, end decisions), per instance and in all.
      dialerCpuPct: dialer.map((c) => Math.round((c / seconds) * 1000) / 10),
      dialerShareOfServerCpuPct:
        Math.round(((dialer[0]! + dialer[1]!) / Math.max(1e-9, cpu[0]! + cpu[1]!)) * 1000) / 10,
      dialerCpuMsPerCall: Math.round(((dialer[0]! + dialer[1]!) / Math.max(1, times.length)) * 10000) / 10,
      // Claiming (rounds), placing (assembling, authorizing, recording, handing to the carrier), deciding ends.
      dialerCpuMsPerCallByPart: {
        round: partMsPerCall('round'),
        place: partMsPerCall('place'),
        callFinished: partMsPerCall('callFinished'),
      },
      // Calls each instance placed and rounds it ran while dialling: the claims' split between the two.
      placedByInstance: parts1.map((p, i) => (p.counts?.place ?? 0) - (parts0[i]!.counts?.place ?? 0)),
      roundsByInstance: parts1.map((p, i) => (p.counts?.round ?? 0) - (parts0[i]!.counts?.round ?? 0)),
      loadAfter: loadavg()[0],
    });
    const open = (view!.counts.pending ?? 0) + (view!.counts.calling ?? 0);
    if (view!.status !== 'completed' || open > 0)
      failures.push(`not every contact is final: ${JSON.stringify(view!.counts)}`);
    if ((result.rateError as number) > 5)
      failures.push(`dialling rate ${perMinute.toFixed(1)}/min is more than 5% from ${RATE}`);
    if (twice.length) failures.push(`${twice.length} contacts dialled twice`);
    if (times.length !== CONTACTS) failures.push(`${times.length} calls for ${CONTACTS} contacts`);
    if ((result.dialerCpuPct as number[]).some((c) => c >= 5))
      failures.push(
        `the dialer's own CPU while dialling was ${(result.dialerCpuPct as number[]).join(', ')}% of a core`,
      );
    if (idleCpu.some((c) => c >= 5)) failures.push(`the dialer's idle polling used ${idleCpu.join(', ')}% of a core`);
  } finally {
    await db.end().catch(() => {});
    for (const s of servers) await s.stop();
    await schema.drop().catch(() => {});
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  result.failures = failures;
  // The shape bench/run.ts collects (npm run bench -- --only=campaigns).
  const rate = result.dialledPerMinute as number | undefined;
  result.checks = [
    {
      name: `dialling rate at ${RATE}/min (calls/min)`,
      value: rate ?? null,
      target: `within 5% of ${RATE}`,
      met: (result.rateError as number) <= 5,
    },
    { name: 'contacts dialled twice', value: result.dialledTwice ?? null, target: '0', met: result.dialledTwice === 0 },
    {
      name: 'contacts in a final status',
      value: result.counts
        ? `${(result.counts as Record<string, number>).total - ((result.counts as Record<string, number>).pending ?? 0) - ((result.counts as Record<string, number>).calling ?? 0)} of ${CONTACTS}`
        : null,
      target: `${CONTACTS} of ${CONTACTS}`,
      met: !failures.some((f) => f.startsWith('not every contact')),
    },
    {
      name: "dialer's own CPU while dialling, % of a core per instance",
      value: (result.dialerCpuPct as number[] | undefined)?.join(', ') ?? null,
      target: '< 5',
      met: ((result.dialerCpuPct as number[] | undefined) ?? [99]).every((c) => c < 5),
    },
    {
      name: "dialer's own CPU per call placed (ms; 5 % of a core at 10 calls/s)",
      value: (result.dialerCpuMsPerCall as number | undefined) ?? null,
      target: '<= 5',
      met: ((result.dialerCpuMsPerCall as number | undefined) ?? 99) <= 5,
    },
    {
      name: "dialer's polling, % of a core per instance",
      value: (result.idleDialerCpuPct as number[] | undefined)?.join(', ') ?? null,
      target: '< 5',
      met: ((result.idleDialerCpuPct as number[] | undefined) ?? [99]).every((c) => c < 5),
    },
  ];
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'campaigns-postgres.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
  if (failures.length) {
    console.error(`bench/campaigns: ${failures.join('; ')}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  killAll();
  process.exit(1);
});
