// npx tsx bench/attack.ts [--quick] [--backend=sqlite|postgres] [--no-build]   (also: npm run bench -- --only=attack)
// The media sockets under attack (issue 46 "Measured"), on the real server
// (node dist/server.js), all traffic on 127.0.0.1:
//   baseline   another user's GET /api/calls at a fixed rate, nothing else;
//   strangers  the same while 200 sockets with no token stream garbage at
//              /api/media/twilio and reconnect whenever they are closed
//              (MEDIA_UNAUTHENTICATED_PER_ADDRESS is raised to 200 for the run:
//              the sockets all come from loopback and stand for 200 addresses,
//              so the cap in all is what holds them);
//   web flood  the same while two web calls send audio at 100× real time, a
//              new call started as soon as the server ends one;
//   after      the server's CPU once the attackers have stopped.
// The victim's requests are timed in this process, the attackers run in
// bench/workers/media-attackers.ts. Memory per web call is the server's RSS
// peak during the web flood above its RSS before it, per concurrent call,
// after one ordinary web call has warmed up the voice pipeline (the voice
// activity model, the recogniser). Writes bench/results/attack-<backend>.json.
// Stops by itself.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { SeededUser } from './seed.js';
import { ROOT, cpuSeconds, forkTs, freePort, killAll, request, rssMb, sleep, stop, watchRss } from './lib/proc.js';
import { createBenchSchema } from './lib/pg-schema.js';
import { startRealServer } from './lib/server.js';
import type { FloodResult, StrangersResult } from './workers/media-attackers.js';
import { percentile, type VictimFigures, victim } from './lib/victim.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const backend = flag('backend') ?? 'sqlite';
const PHASE_S = quick
  ? { baseline: 3, strangers: 5, flood: 5, after: 3 }
  : { baseline: 10, strangers: 15, flood: 15, after: 5 };
const VICTIM_RATE = 50;
const STRANGERS = 200;
const FLOOD_SPEED = 100;
const TARGETS = { p99Ms: 100, mbPerWebCall: 20, cpuAfterPct: 10 };
const hardStop = setTimeout(
  () => {
    console.error('bench/attack: hard time limit reached');
    killAll();
    process.exit(1);
  },
  (quick ? 150 : 300) * 1000,
);
hardStop.unref();

/** An ordinary web call for a second at real time, then a hang-up: loads what the first call of a process loads. */
async function warmUp(base: string, token: string): Promise<void> {
  const started = await startWebCall(base, token);
  const ws = new WebSocket(started.url);
  await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  const frame = Buffer.alloc(640);
  for (let i = 0; i < 50 && ws.readyState === WebSocket.OPEN; i++) {
    ws.send(frame);
    await sleep(20);
  }
  ws.send(JSON.stringify({ type: 'hangup' }));
  await new Promise((resolve) => ws.once('close', resolve));
}

async function startWebCall(base: string, token: string): Promise<{ sessionId: string; url: string }> {
  const res = await fetch(`${base}/api/calls/web`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: { name: 'Amy', firstMessage: 'Hello, this is Amy.' } }),
  });
  if (res.status !== 201) throw new Error(`POST /api/calls/web: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as { sessionId: string; url: string };
}

async function main() {
  if (!args.includes('--no-build')) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed (use --no-build to measure the existing dist/)');
  }
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-bench-attack-'));
  const pgSchema = await createBenchSchema(backend, 'bench_attack');
  const port = await freePort();
  const env: Record<string, string> = {
    MASTER_KEY: randomBytes(32).toString('base64'),
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ...(pgSchema.urlWithSchema ? { DATABASE_URL: pgSchema.urlWithSchema } : {}),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // The strangers all come from 127.0.0.1 and stand for 200 addresses: the cap in all (200) is what holds them.
    MEDIA_UNAUTHENTICATED_PER_ADDRESS: String(STRANGERS),
    // The flooders start a new web call as soon as one is ended, for the whole phase.
    RATE_LIMIT_WEB_CALLS_PER_USER: '100000/1h',
  };
  const seeder = forkTs('bench/seed.ts', [], {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const [victimUser, ...flooders] = (
    await request<{ users: SeededUser[] }>(seeder, { type: 'seed', count: 3 }, 'seeded', 120_000)
  ).users as [SeededUser, SeededUser, SeededUser];
  const server = await startRealServer({ dataDir: dir, env, port });
  const attackers = forkTs('bench/workers/media-attackers.ts');
  const failures: string[] = [];
  try {
    await warmUp(server.base, flooders[0]!.token);
    await sleep(1000);

    console.log('bench/attack: baseline…');
    const baseline = await victim(server.base, victimUser.token, PHASE_S.baseline);

    console.log(`bench/attack: ${STRANGERS} strangers streaming garbage at /api/media/twilio…`);
    const strangersDone = request<{ result: StrangersResult }>(
      attackers,
      {
        type: 'strangers',
        url: `ws://127.0.0.1:${port}/api/media/twilio`,
        sockets: STRANGERS,
        seconds: PHASE_S.strangers + 1,
        pauseMs: 20,
      },
      'strangers-done',
      (PHASE_S.strangers + 30) * 1000,
    );
    await sleep(1000); // all 200 under way
    const underStrangers = await victim(server.base, victimUser.token, PHASE_S.strangers);
    const strangers = (await strangersDone).result;
    await sleep(1500);

    console.log(`bench/attack: two web calls sending audio at ${FLOOD_SPEED}× real time…`);
    const rss = watchRss(server.pid, 100);
    await sleep(300);
    const rssBefore = rssMb(server.pid);
    rss.reset();
    const floods: FloodResult[] = [];
    const floodErrors: string[] = [];
    let floodsStarted = 0;
    const floodUntil = Date.now() + (PHASE_S.flood + 1) * 1000;
    const flooder = async (user: SeededUser) => {
      while (Date.now() < floodUntil) {
        const call = await startWebCall(server.base, user.token).catch(
          (err: unknown) => (floodErrors.push(String(err)), null),
        );
        if (!call) {
          await sleep(200);
          continue;
        }
        floodsStarted++;
        const done = await request<{ result?: FloodResult; error?: string }>(
          attackers,
          { type: 'flood', id: call.sessionId, url: call.url, speed: FLOOD_SPEED },
          'flood-done',
          60_000,
        );
        if (done.result) floods.push(done.result);
        else floodErrors.push(done.error ?? 'no result');
        // The server still ends the call (its record) after the socket closes: the next one may wait a moment for a slot.
        await sleep(50);
      }
    };
    const flooding = Promise.all(flooders.map(flooder));
    await sleep(500);
    const underFlood = await victim(server.base, victimUser.token, PHASE_S.flood);
    await flooding;
    const rssPeak = rss.peak();
    rss.close();

    console.log('bench/attack: after…');
    await sleep(500);
    const cpu0 = cpuSeconds(server.pid);
    await sleep(PHASE_S.after * 1000);
    const cpu1 = cpuSeconds(server.pid);
    const cpuAfterPct = cpu0 !== null && cpu1 !== null ? Math.round(((cpu1 - cpu0) / PHASE_S.after) * 1000) / 10 : null;
    const rssAfter = rssMb(server.pid);
    const crashed = server.crash();
    if (crashed) failures.push(crashed);

    const mbPerWebCall =
      rssBefore !== null && rssPeak !== null ? Math.round(((rssPeak - rssBefore) / 2) * 10) / 10 : null;
    const endedFlood = floods.filter((f) => f.close.code === 1008 && f.close.reason === 'audio_flood').length;
    const checks = [
      {
        name: 'another user p99 while 200 strangers stream garbage at /api/media/twilio',
        value: underStrangers.p99,
        target: `< ${TARGETS.p99Ms} ms`,
        met: underStrangers.p99 !== null && underStrangers.p99 < TARGETS.p99Ms && underStrangers.errors === 0,
      },
      {
        name: `another user p99 while two web calls send audio at ${FLOOD_SPEED}× real time`,
        value: underFlood.p99,
        target: `< ${TARGETS.p99Ms} ms`,
        met: underFlood.p99 !== null && underFlood.p99 < TARGETS.p99Ms && underFlood.errors === 0,
      },
      {
        name: 'server memory per flooding web call (RSS peak above before, per call)',
        value: mbPerWebCall,
        target: `< ${TARGETS.mbPerWebCall} MB`,
        met: mbPerWebCall !== null && mbPerWebCall < TARGETS.mbPerWebCall,
      },
      {
        name: 'flooding web calls ended audio_flood',
        value: `${endedFlood}/${floods.length}`,
        target: 'all',
        met: floods.length > 0 && endedFlood === floods.length,
      },
      {
        name: 'server CPU once the attackers stopped',
        value: cpuAfterPct,
        target: `< ${TARGETS.cpuAfterPct} % of a core`,
        met: cpuAfterPct !== null && cpuAfterPct < TARGETS.cpuAfterPct,
      },
    ];
    const audio = floods.map((f) => f.audioSeconds);
    const report = {
      at: new Date().toISOString(),
      backend,
      quick,
      machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Math.round(l * 100) / 100) },
      phasesSeconds: PHASE_S,
      victimRatePerSecond: VICTIM_RATE,
      baseline,
      strangers: { sockets: STRANGERS, ...strangers, victim: underStrangers },
      webFlood: {
        speed: FLOOD_SPEED,
        callsStarted: floodsStarted,
        callsEnded: floods.length,
        endedAudioFlood: endedFlood,
        closes: floods.reduce<Record<string, number>>(
          (acc, f) => (
            (acc[`${f.close.code} ${f.close.reason}`] = (acc[`${f.close.code} ${f.close.reason}`] ?? 0) + 1), acc
          ),
          {},
        ),
        audioSentPerCallSeconds: {
          p50: percentile(audio, 50),
          max: audio.length ? Math.round(Math.max(...audio)) : null,
        },
        endedAfterMsPerCall: {
          p50: percentile(
            floods.flatMap((f) => (f.endedAfterMs === null ? [] : [f.endedAfterMs])),
            50,
          ),
          max: Math.max(0, ...floods.map((f) => f.endedAfterMs ?? 0)),
        },
        bytesSent: floods.reduce((a, f) => a + f.bytesSent, 0),
        errors: floodErrors.slice(0, 5),
        victim: underFlood,
        rssBeforeMb: rssBefore,
        rssPeakMb: rssPeak,
        mbPerWebCall,
      },
      after: { cpuPctOfCore: cpuAfterPct, rssMb: rssAfter },
      checks,
      failures,
    };
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    const file = join(ROOT, 'bench', 'results', `attack-${backend}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    const v = (f: VictimFigures) =>
      `p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms, ${f.requests} requests, ${f.errors} errors`;
    console.log(
      `bench/attack (${backend}${quick ? ', quick' : ''}): another user's GET /api/calls at ${VICTIM_RATE}/s`,
    );
    console.log(`  baseline:   ${v(baseline)}`);
    console.log(
      `  strangers:  ${v(underStrangers)}; ${strangers.connections} connections, closes ${JSON.stringify(strangers.closes)}, ${Math.round(strangers.bytesSent / 1e6)} MB of garbage sent`,
    );
    console.log(
      `  web flood:  ${v(underFlood)}; ${floods.length} calls ended (${endedFlood} audio_flood, after ${report.webFlood.endedAfterMsPerCall.p50} ms and ${report.webFlood.audioSentPerCallSeconds.p50} s of audio each, p50), ${Math.round(report.webFlood.bytesSent / 1e6)} MB of audio sent, RSS ${rssBefore} → peak ${rssPeak} MB (${mbPerWebCall} MB per call)`,
    );
    console.log(`  after:      server CPU ${cpuAfterPct} % of a core, RSS ${rssAfter} MB`);
    for (const c of checks) console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value} (target ${c.target})`);
    console.log(`bench/attack: wrote ${file}`);
  } finally {
    await stop(attackers, 2000);
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
