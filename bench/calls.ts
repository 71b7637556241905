// npx tsx bench/calls.ts [--calls=100] [--webhooks=2000] [--step-ms=500] [--backend=sqlite|postgres]
//   (also: npm run bench -- --only=calls)
// Call progress under load, in one process: the app listens on 127.0.0.1, N
// users each hold a live `call_status` stream, and N sandbox calls start at
// once (each plays queued → ringing → in_progress → completed). Measures:
//   - every call_status event reaches its subscriber (4 per call), and the
//     latency from the audio report (`at`, stamped when the in-process audio
//     server hands the signed report over) to the frame's arrival at the client;
//   - every status reaches the call's webhook, signature verified;
//   - webhook delivery throughput: a burst of deliveries to a local receiver.
// The subscribers and the webhook receiver run in a child process
// (bench/workers/call-clients.ts), as real clients would, so their work does
// not compete with the server's event loop; the audio server is the
// in-process sandbox, as in `npm start`. Stops by itself.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { defaultRateLimits, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { AssembledCall } from '../src/providers/audio/interface.js';
import { forkTs, request as ask, stop } from './lib/proc.js';
import { createBenchSchema } from './lib/pg-schema.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const CALLS = Number(flag('calls', '100'));
const WEBHOOK_BURST = Number(flag('webhooks', '2000'));
const STEP_MS = Number(flag('step-ms', '500'));
const backend = flag('backend', 'sqlite');
/** --server-env=EVENTS_COALESCE_MS=0,… passes settings to the app (for trying them out). */
const serverEnv: Record<string, string> = Object.fromEntries(
  (
    args
      .find((a) => a.startsWith('--server-env='))
      ?.slice(13)
      .split(',') ?? []
  ).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const withWebhooks = !args.includes('--no-call-webhooks');
const HARD_LIMIT_MS = 180_000;

const hardStop = setTimeout(() => {
  console.error('bench/calls: hard time limit reached');
  process.exit(1);
}, HARD_LIMIT_MS);
hardStop.unref();

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-bench-calls-'));
  const pgSchema = await createBenchSchema(backend, 'bench_calls');
  const { databaseUrl, schema } = pgSchema;
  mkdirSync(dir, { recursive: true });

  const config = {
    ...loadConfig({
      NODE_ENV: 'development',
      DATA_DIR: dir,
      LOG_LEVEL: 'warn',
      AUDIO_SANDBOX_STEP_MS: String(STEP_MS),
      SANDBOX_CALLS: 'timer',
      WEBHOOK_POLL_MS: '200',
      EVENTS_MAX_STREAMS_PER_USER: '5',
      ...serverEnv,
    }),
    databaseUrl: databaseUrl ?? null,
    passwordHash: { memoryCost: 1024, timeCost: 1 },
    // Every user signs up from 127.0.0.1.
    rateLimits: { ...defaultRateLimits, registerPerIp: { limit: 100_000, windowMs: 60_000 } },
  };
  const database = openDatabase({ databaseUrl: databaseUrl ?? null, dataDir: dir, pgSchema: schema ?? undefined });
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({
    config,
    database,
    secrets: { masterKey: randomBytes(32), jwtSecret: randomBytes(32).toString('hex') },
    logger: { level: 'warn' },
  });
  app.services.webhooks.webhookWorker.reportErrorsTo(app.log);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const { calls } = app.services.calls;
  const { webhooks, webhookWorker } = app.services.webhooks;

  let clients: ReturnType<typeof forkTs> | null = null;
  try {
    // Users, each with a verified phone, a webhook secret and a live stream.
    const users: Array<{ id: string; token: string; secret: string }> = [];
    for (let i = 0; i < CALLS; i++) {
      const email = `bench-calls-${i}-${randomBytes(3).toString('hex')}@example.com`;
      const res = await app.inject({
        method: 'POST',
        url: '/api/auth/register',
        payload: {
          email,
          phone: `+1415555${String(i).padStart(4, '0')}`,
          password: 'correct horse battery',
          confirmPassword: 'correct horse battery',
        },
      });
      if (res.statusCode !== 200) throw new Error(`register: ${res.statusCode} ${res.body}`);
      const { auth, token } = res.json();
      await app.services.auth.users.update(auth.id, { phone_verified: 1 });
      // Calls cost money: $5 of prepaid credit through the sandbox checkout, as a customer pays.
      const topUp = await app.inject({
        method: 'POST',
        url: '/api/credits/add?amount=5',
        headers: { authorization: `Bearer ${token}` },
      });
      if (topUp.statusCode !== 200) throw new Error(`top-up: ${topUp.statusCode} ${topUp.body}`);
      const paid = await app.inject({ method: 'POST', url: new URL(topUp.json().url).pathname });
      if (paid.statusCode !== 200) throw new Error(`sandbox checkout: ${paid.statusCode} ${paid.body}`);
      const secret = (await webhooks.getSecret(auth.id)).secret;
      // A caller has a root already (its registered server signs call requests); the call record goes into its calls store.
      await app.services.data.root.getRoot(auth.id);
      users.push({ id: auth.id, token, secret });
    }
    clients = forkTs('bench/workers/call-clients.ts');
    const { receiverUrl } = await ask<{ receiverUrl: string }>(
      clients,
      { type: 'start', origin, users },
      'ready',
      60_000,
    );
    const reached = (events: number, hooks: number, timeoutMs: number) =>
      ask(clients!, { type: 'expect', events, hooks }, 'reached', timeoutMs).then(
        () => true,
        () => false,
      );

    // Phase 1: N calls at once.
    const call = (i: number): AssembledCall => ({
      to: `+1415666${String(i + 1).padStart(4, '0')}`, // not ending in 0000, which the sandbox leaves unanswered
      from: '+14155550100',
      agent: { name: 'Amy' },
      contact: { name: `Contact ${i}` },
      systemPrompt: 'You are Amy.',
      firstMessage: 'Hello, this is Amy.',
      voice: { provider: 'local', voiceId: 'en-us' },
      tools: [],
    });
    const allArrived = reached(CALLS * 4, withWebhooks ? CALLS * 4 : 0, 60_000);
    const t0 = Date.now();
    const sessions = await Promise.all(
      users.map((u, i) => calls.start(u.id, call(i), withWebhooks ? `${receiverUrl}/hook/${u.id}` : null)),
    );
    const startMs = Date.now() - t0;
    await allArrived;
    const callsMs = Date.now() - t0;
    const phase1 = await ask<ClientReport>(clients, { type: 'report' }, 'report', 10_000);
    const latencies = [...phase1.latencies].sort((a, b) => a - b);
    const perSession = new Map(Object.entries(phase1.perSession));
    const byStatus = new Map(Object.entries(phase1.byStatus));
    for (const s of sessions) {
      const seen = perSession.get(s.sessionId) ?? [];
      if (seen.join(',') !== 'queued,ringing,in_progress,completed')
        console.error(`incomplete ${s.sessionId}: ${seen.join(',') || 'nothing'}`);
      if (seen.length !== 4 && process.env.BENCH_DEBUG) {
        const progress = await database.db
          .selectFrom('call_progress')
          .select(['status', 'received_at'])
          .where('session_id', '=', s.sessionId)
          .execute();
        const events = await database.db
          .selectFrom('events')
          .select(['id', 'payload'])
          .where('type', '=', 'call_status')
          .where('payload', 'like', `%${s.sessionId}%`)
          .execute();
        console.error('incomplete', s.sessionId, seen, progress, events);
      }
    }
    const complete = sessions.filter(
      (s) => (perSession.get(s.sessionId) ?? []).join(',') === 'queued,ringing,in_progress,completed',
    ).length;

    // Phase 2: a burst of deliveries to the receiver.
    const burstUser = users[0].id;
    const burstDone = reached(0, phase1.received.verified + WEBHOOK_BURST, 60_000);
    const t1 = Date.now();
    for (let done = 0; done < WEBHOOK_BURST; done += 500) {
      const batch = Array.from({ length: Math.min(500, WEBHOOK_BURST - done) }, (_, i) => ({
        userId: burstUser,
        url: `${receiverUrl}/hook/${burstUser}/burst`,
        type: 'call_status',
        data: { session_id: `burst-${done + i}`, status: 'completed', at: new Date().toISOString() },
      }));
      await database.db.transaction().execute((trx) => webhooks.enqueue(trx, batch));
    }
    webhooks.wake();
    await burstDone;
    const burstMs = Date.now() - t1;
    await webhookWorker.whenIdle();
    const phase2 = await ask<ClientReport>(clients, { type: 'report' }, 'report', 10_000);
    const burstDelivered = phase2.received.verified - phase1.received.verified;

    const results = {
      date: new Date().toISOString(),
      machine: { cores: cpus().length, loadAverage: loadavg().map((l) => Math.round(l * 10) / 10) },
      backend: database.dialect,
      calls: CALLS,
      sandboxStepMs: STEP_MS,
      startAllMs: startMs,
      callsWallMs: callsMs,
      events: { expected: CALLS * 4, received: perSessionTotal(perSession), sessionsWithAllFourInOrder: complete },
      reportToSubscriberByStatusP99: Object.fromEntries(
        ['queued', 'ringing', 'in_progress', 'completed'].map((st) => [
          st,
          percentile(byStatus.get(st)?.sort((a, b) => a - b) ?? [], 99),
        ]),
      ),
      reportToSubscriberMs: {
        p50: percentile(latencies, 50),
        p90: percentile(latencies, 90),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? null,
      },
      callWebhooks: { expected: CALLS * 4, verified: phase2.received.callHooks, refused: phase2.received.refused },
      webhookBurst: {
        deliveries: WEBHOOK_BURST,
        delivered: burstDelivered,
        ms: burstMs,
        perSecond: Math.round((burstDelivered / burstMs) * 1000),
      },
    };
    console.log(JSON.stringify(results, null, 2));
    mkdirSync(join(process.cwd(), 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(process.cwd(), 'bench', 'results', `calls-${database.dialect}.json`),
      `${JSON.stringify(results, null, 2)}\n`,
    );
    const ok =
      results.events.received === results.events.expected &&
      complete === CALLS &&
      (!withWebhooks || results.callWebhooks.verified === CALLS * 4) &&
      phase2.received.refused === 0 &&
      results.webhookBurst.delivered === WEBHOOK_BURST;
    console.log(
      `${ok ? 'PASS' : 'FAIL'}: ${complete}/${CALLS} calls streamed all four statuses in order; p99 report → subscriber ${results.reportToSubscriberMs.p99} ms (target < 100 ms: ${(results.reportToSubscriberMs.p99 ?? Infinity) < 100 ? 'met' : 'MISSED'}; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores); ${results.callWebhooks.verified}/${CALLS * 4} call webhooks verified; burst ${results.webhookBurst.perSecond} deliveries/s`,
    );
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (clients) {
      clients.send({ type: 'stop' });
      await stop(clients);
    }
    await app.close();
    await database.close();
    await pgSchema.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ClientReport {
  latencies: number[];
  byStatus: Record<string, number[]>;
  perSession: Record<string, string[]>;
  received: { verified: number; refused: number; callHooks: number };
}

function perSessionTotal(map: Map<string, string[]>): number {
  let n = 0;
  for (const list of map.values()) n += list.length;
  return n;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
