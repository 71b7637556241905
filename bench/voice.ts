// npx tsx bench/voice.ts [--quick] [--concurrency=1,10,50,150] [--turns=2] [--backend=sqlite|postgres]
//   [--stt-ms=150] [--llm-ms=300] [--tts-ms=100] [--calls-per-second=10] [--no-build] [--profile=DIR] [--no-hearing]
//   (also: npm run bench -- --only=voice)
//   --no-hearing skips the hearing figures that follow the levels (bench/lib/voice-hearing.ts): audio sent to a
//   per-utterance recogniser per second of caller speech, and offline sandbox calls at 1 and 10 concurrent calls (placed
//   one a second), then 10 placed all at once (every admitted call must greet: the local speech queue's room per call).
//   --calls-per-second: how fast a level's calls are placed (0: all at once, the lockstep worst case). Carriers admit
//   outbound calls at a limited rate (Twilio queues an account's Calls.json at 1 per second unless raised), so the
//   default places 10 a second: 50 calls start over 5 s, then all 50 are on the line together for the rest of the level.
//   --profile=DIR runs the server under node --cpu-prof, keeps the profile in DIR and summarizes the last level's window
//   (the window, in process.hrtime µs as the profile's timestamps, is kept with the summary to line other samples up with it)
//   SERVER_NODE_OPTIONS (environment) is passed to the server as NODE_OPTIONS, with LAG_OUT: a preloaded sampler
//   (--import=file:///…) can record when timers ran late and write it there at exit (bench/ANALYSIS.md)
// The built-in voice agent's latency, end to end on real sockets: the real
// server (node dist/server.js) carries POST /api/session/call through Twilio
// (test/support/twilio-fake.ts), hears through the Deepgram fake, thinks with
// the OpenAI-compatible fake and speaks through the ElevenLabs fake, each with
// a fixed delay (result after the utterance ends / first token / first byte).
// Callers in their own process (bench/workers/voice-callers.ts) play Twilio:
// they speak flite speech at real pace, 20 ms μ-law frames, echo marks, and
// hang up after their turns. Measured per turn: end of caller speech → first
// agent frame at the client; from the call records: provider time and our own
// overhead; agent frame pacing at the client; server CPU per call-minute and
// RSS per call; calls lost or stuck. Writes bench/results/voice-<backend>.json.
// Traffic stays on 127.0.0.1. Stops by itself.
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import { OfflineCallerVoice } from '../src/providers/call-speech/offline-caller.js';
import { startDeepgramFake } from '../test/support/deepgram-fake.js';
import { startElevenLabsFake } from '../test/support/elevenlabs-fake.js';
import { startOpenAiFake } from '../test/support/openai-fake.js';
import { signPayload } from '../test/support/signed-payloads.js';
import { startTwilioFake } from '../test/support/twilio-fake.js';
import type { SeededUser } from './seed.js';
import { ROOT, cpuSeconds, forkTs, freePort, killAll, request, rssMb, sleep, stop, watchRss } from './lib/proc.js';
import { startRealServer } from './lib/server.js';
import {
  type OfflineLevel,
  type OfflineLevelPlan,
  type RecogniserBytes,
  measureOfflineLevels,
  measureRecogniserBytes,
} from './lib/voice-hearing.js';
import { isPocketsphinxInstalled } from '../src/providers/speech-to-text/pocketsphinx.js';
import { createBenchSchema } from './lib/pg-schema.js';
import { findProfile, summarizeProfile } from './lib/profile.js';
import type { CallerResult } from './workers/voice-callers.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const quick = args.includes('--quick');
const LEVELS = (flag('concurrency')?.split(',').map(Number) ?? (quick ? [1, 10] : [1, 10, 50, 150])).filter(
  (n) => n > 0,
);
const TURNS = Number(flag('turns') ?? 2);
const CALLS_PER_SECOND = Number(flag('calls-per-second') ?? 10);
const backend = flag('backend') ?? 'sqlite';
const profileDir = flag('profile');
/** The reference provider delays: the voice-to-voice target (≤ 800 ms at the caller) is judged with these only. */
const REFERENCE_DELAYS = { sttMs: 150, llmFirstTokenMs: 300, ttsFirstByteMs: 100 };
const DELAYS = {
  sttMs: Number(flag('stt-ms') ?? REFERENCE_DELAYS.sttMs),
  llmFirstTokenMs: Number(flag('llm-ms') ?? REFERENCE_DELAYS.llmFirstTokenMs),
  ttsFirstByteMs: Number(flag('tts-ms') ?? REFERENCE_DELAYS.ttsFirstByteMs),
};
const referenceDelays =
  DELAYS.sttMs === REFERENCE_DELAYS.sttMs &&
  DELAYS.llmFirstTokenMs === REFERENCE_DELAYS.llmFirstTokenMs &&
  DELAYS.ttsFirstByteMs === REFERENCE_DELAYS.ttsFirstByteMs;
const hearing = !args.includes('--no-hearing');
/** Calls whose transcription requests measure what a per-utterance recogniser is sent; the offline levels (sandbox calls). */
const BYTES_CALLS = hearing ? (quick ? 2 : 4) : 0;
const OFFLINE_LEVELS: OfflineLevelPlan[] = hearing
  ? [
      { concurrency: 1, callsPerSecond: 1 },
      { concurrency: 10, callsPerSecond: 1 },
      { concurrency: 10, callsPerSecond: 0 },
    ]
  : [];
const HARD_LIMIT_MS = (quick ? 300 : 720) * 1000 + (hearing ? 300_000 : 0);
/** The server's end-of-turn wait after a final ending a sentence (VOICE_ENDPOINT_MIN_MS, default). */
const ENDPOINT_MIN_MS = 500;
const LINES = ['What are your opening hours on Friday?', 'Thank you, that is all I needed.'];

const hardStop = setTimeout(() => {
  console.error('bench/voice: hard time limit reached');
  killAll();
  process.exit(1);
}, HARD_LIMIT_MS);
hardStop.unref();

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length
    ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10
    : null;
};
const stats = (values: number[]) => ({
  n: values.length,
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length ? Math.round(Math.max(...values) * 10) / 10 : null,
});

interface Latency {
  sttMs: number;
  llmFirstTokenMs: number;
  ttsFirstByteMs: number;
  overheadMs: number;
  totalMs: number;
}

export interface VoiceLevel {
  concurrency: number;
  calls: number;
  /** How fast the level's calls were placed (0: all at once). */
  callsPerSecond: number;
  /** How long all the level's calls were on the line together, in ms. */
  allOnLineMs: number;
  completedWithRecord: number;
  lostOrStuck: string[];
  callerErrors: string[];
  /** End of caller speech → first agent frame at the client. */
  replyMs: ReturnType<typeof stats>;
  turnsUnanswered: number;
  /** From the call records (line.latency). */
  providerMs: ReturnType<typeof stats>;
  overheadMs: ReturnType<typeof stats>;
  /** overheadMs less the turn-taking wait (VOICE_ENDPOINT_MIN_MS after speech, beyond what STT took): the server's own processing. */
  processingMs: ReturnType<typeof stats>;
  recordTotalMs: ReturnType<typeof stats>;
  /** |inter-arrival − 20 ms| of agent media frames at the client. */
  pacingJitterMs: ReturnType<typeof stats>;
  /** Agent frame arrival against its 20 ms slot from the utterance's first frame (positive: late). */
  frameLatenessMs: ReturnType<typeof stats>;
  /** Outgoing pacing measured where frames leave: the server's voice_frame_lateness_seconds histogram over the level. */
  sendLateness: SendLateness | null;
  /** The server's event-loop delay over the level (prom-client's monitorEventLoopDelay, 10 ms resolution). */
  loopDelayMs: LoopDelay | null;
  callMinutes: number;
  serverCpuSeconds: number | null;
  cpuSecondsPerCallMinute: number | null;
  rssBeforeMb: number | null;
  rssPeakMb: number | null;
  rssPerCallMb: number | null;
  wallMs: number;
}

export interface SendLateness {
  frames: number;
  /** Upper bounds of the histogram buckets holding the median and the 99th percentile frame (ms). */
  p50AtMostMs: number | null;
  p99AtMostMs: number | null;
  /** Share of frames that left at most 10 ms late, in percent. */
  within10MsPct: number | null;
}

/** The server's event-loop delay since the previous scrape (prom-client resets it on each): p50, p99 and max, ms. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}
let lastLoopDelay: LoopDelay | null = null;

/** The server's cumulative outgoing-pacing buckets (le in ms → frames), from /metrics. */
async function latenessBuckets(base: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const lag = (name: string) =>
    Math.round(
      Number(text.match(new RegExp(`^nodejs_eventloop_lag_${name}_seconds (\\S+)`, 'm'))?.[1] ?? NaN) * 10000,
    ) / 10;
  lastLoopDelay = { p50: lag('p50'), p99: lag('p99'), max: lag('max') };
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^voice_frame_lateness_seconds_bucket\{le="([^"]+)"\} (\d+)/gm))
    buckets.set(m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]) * 1000, Number(m[2]));
  return buckets;
}

function sendLateness(before: Map<number, number>, after: Map<number, number>): SendLateness | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const frames = counts.at(-1) ?? 0;
  if (!frames) return null;
  const at = (p: number) => {
    const i = counts.findIndex((c) => c >= p * frames);
    return i < 0 || !Number.isFinite(bounds[i]!) ? null : bounds[i]!;
  };
  const within = bounds.indexOf(10);
  return {
    frames,
    p50AtMostMs: at(0.5),
    p99AtMostMs: at(0.99),
    within10MsPct: within < 0 ? null : Math.round((counts[within]! / frames) * 10000) / 100,
  };
}

async function main() {
  if (!args.includes('--no-build')) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed (use --no-build to measure the existing dist/)');
  }
  const voice = OfflineCallerVoice.create();
  if (!voice) throw new Error("bench/voice needs flite or espeak-ng for the callers' speech");
  const pcm = await Promise.all(LINES.map((l) => voice.speak(l, AbortSignal.timeout(30_000))));

  const [twilio, deepgram, openai, eleven] = await Promise.all([
    startTwilioFake(),
    startDeepgramFake(),
    startOpenAiFake(),
    startElevenLabsFake(),
  ]);
  deepgram.resultDelayMs = DELAYS.sttMs;
  openai.firstTokenDelayMs = DELAYS.llmFirstTokenMs;
  eleven.stream.firstByteDelayMs = DELAYS.ttsFirstByteMs;
  // The ElevenLabs fake streams at about real pace (400 bytes = 50 ms every 40 ms), as the provider does.
  eleven.stream.delayMs = 40;
  // Recognised text ends a sentence, as Deepgram's punctuated finals do, so the turn ends VOICE_ENDPOINT_MIN_MS after speech.
  for (let i = 0; i < 2000; i++) deepgram.transcripts.push(LINES[i % LINES.length]!);
  openai.chatScripts.length = 0;

  const dir = mkdtempSync(join(tmpdir(), 'wsapi-bench-voice-'));
  const pgSchema = await createBenchSchema(backend, 'bench_voice');
  const dbEnv: Record<string, string> = pgSchema.urlWithSchema ? { DATABASE_URL: pgSchema.urlWithSchema } : {};
  const secrets = { MASTER_KEY: randomBytes(32).toString('base64'), JWT_SECRET: randomBytes(48).toString('base64url') };
  const latencyUsers = LEVELS.reduce((a, b) => a + b, 0);
  const offlineCalls = OFFLINE_LEVELS.reduce((a, b) => a + b.concurrency, 0);
  const total = latencyUsers + BYTES_CALLS + offlineCalls;
  const port = await freePort();
  const env = {
    ...secrets,
    ...dbEnv,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_FROM: twilio.from,
    TWILIO_API_BASE: twilio.apiBase,
    DEEPGRAM_API_KEY: deepgram.apiKey,
    DEEPGRAM_API_BASE: deepgram.apiBase,
    LLM_URL: openai.url,
    LLM_API_KEY: openai.apiKey,
    LLM_MODEL: 'fake-model',
    VOICE_ENDPOINT_MIN_MS: String(ENDPOINT_MIN_MS),
    ELEVENLABS_API_KEY: eleven.apiKey,
    ELEVENLABS_API_BASE: eleven.apiBase,
    // The callers all connect from 127.0.0.1 (as Twilio does from a few addresses of its own): a level placed all at
    // once (--calls-per-second=0) has up to 50 streams waiting for their token together.
    MEDIA_UNAUTHENTICATED_PER_ADDRESS: '200',
    ...(process.env.SERVER_NODE_OPTIONS
      ? { NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS, LAG_OUT: process.env.LAG_OUT ?? '' }
      : {}),
  };

  // Users before the server starts (bench/seed.ts), then their money, numbers and registered servers.
  const seeder = forkTs('bench/seed.ts', [], {
    PATH: process.env.PATH,
    NODE_ENV: 'development',
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    ...env,
  });
  const users = (await request<{ users: SeededUser[] }>(seeder, { type: 'seed', count: total }, 'seeded', 120_000))
    .users;
  const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dir, LOG_LEVEL: 'warn', ...env });
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgPoolSize: 2 });
  const numbers: string[] = [];
  const now = Date.now();
  for (const [i, user] of users.entries()) {
    await database.db
      .insertInto('credit_ledger')
      .values({
        user_id: user.id,
        cents: 10_000,
        reason: 'bench_credit',
        ref: `bench:${randomUUID()}`,
        created_at: now,
      })
      .execute();
    const id = newId(now + i);
    const phone = `+1415555${String(i).padStart(4, '0')}`;
    const sid = `PN${randomUUID().replace(/-/g, '').slice(0, 32)}`;
    twilio.incoming.set(sid, { sid, phoneNumber: phone, friendlyName: phone, addressSid: null, voiceUrl: '' });
    // The offline levels' calls go through the sandbox carrier, from a sandbox number.
    const sandbox = i >= latencyUsers + BYTES_CALLS;
    await database.db
      .insertInto('phone_numbers')
      .values({
        id,
        user_id: user.id,
        provider: sandbox ? 'sandbox' : 'twilio',
        provider_sid: sid,
        phone_number: phone,
        name: 'Bench',
        description: null,
        type: 'both',
        number_type: 'local',
        country: 'US',
        capabilities: JSON.stringify({ voice: true, sms: true, mms: false }),
        monthly_cents: 115,
        currency: 'usd',
        address_sid: null,
        subscription_id: null,
        inbound_configuration_id: null,
        status: 'active',
        created_at: now,
        updated_at: now,
      })
      .execute();
    numbers.push(id);
  }

  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const server = await startRealServer({ dataDir: dir, env, port, ...(profileDir ? { cpuProfDir: profileDir } : {}) });
  let window: { fromUs: number; toUs: number } | undefined;
  const callers = forkTs('bench/workers/voice-callers.ts');
  const levels: VoiceLevel[] = [];
  const failures: string[] = [];
  let bytes: RecogniserBytes | null = null;
  let offline: OfflineLevel[] = [];
  try {
    const api = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(server.base + path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res;
    };
    const registered: Array<{ name: string; privateKey: string; publicKey: string }> = [];
    for (const user of users) {
      const res = await api('POST', '/api/servers', user.token, {
        name: `bench-${user.id.slice(-8)}`,
        mode: 'generate',
      });
      if (res.status !== 200) throw new Error(`POST /api/servers: ${res.status} ${await res.text()}`);
      registered.push((await res.json()) as { name: string; privateKey: string; publicKey: string });
    }
    await request(
      callers,
      { type: 'lines', lines: pcm.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString('base64')) },
      'ready',
      30_000,
    );
    const pending = new Map<string, (r: { result?: CallerResult; error?: string }) => void>();
    callers.on('message', (m: { type: string; id: string; result?: CallerResult; error?: string }) => {
      if (m.type === 'done') pending.get(m.id)?.(m);
    });
    await sleep(1000);

    let offset = 0;
    for (const concurrency of LEVELS) {
      const batch = users.slice(offset, offset + concurrency).map((u, k) => ({
        user: u,
        server: registered[offset + k]!,
        numberId: numbers[offset + k]!,
        index: offset + k,
      }));
      offset += concurrency;
      console.log(`bench/voice: ${concurrency} concurrent call${concurrency === 1 ? '' : 's'}…`);
      const rss = watchRss(server.pid, 250);
      await sleep(300);
      const rssBefore = rssMb(server.pid);
      rss.reset();
      const cpu0 = cpuSeconds(server.pid);
      const buckets0 = await latenessBuckets(server.base);
      const t0 = Date.now();
      const fromUs = Number(process.hrtime.bigint() / 1000n);
      const runs: Array<{
        user: SeededUser;
        sessionId: string | null;
        onLine?: [number, number];
        result?: CallerResult;
        error?: string;
      }> = await Promise.all(
        batch.map(async ({ user, server: srv, numberId, index }, k) => {
          if (CALLS_PER_SECOND > 0) await sleep((k * 1000) / CALLS_PER_SECOND);
          const jwt = await signPayload(srv, {
            agent: {
              name: 'Amy',
              personaId: `elevenlabs-${eleven.voices[0]!.voice_id}`,
              firstMessage: 'Hello, this is Amy from the clinic.',
            },
            contact: { name: 'Grace', phone: `+1415777${String(index).padStart(4, '0')}` },
            type: 'prompt',
            prompt: 'Answer questions about the clinic briefly.',
            phoneNumberId: numberId,
          });
          const res = await api('POST', '/api/session/call', user.token, { server: srv.name, jwt });
          if (res.status !== 204)
            return {
              user,
              sessionId: null,
              error: `POST /api/session/call: ${res.status} ${(await res.text()).slice(0, 300)}`,
            };
          const sessionId = res.headers.get('x-session-id')!;
          const placed = twilio.calls.find((c) => c.statusCallback?.endsWith(`/${sessionId}`));
          const stream =
            placed && /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml);
          if (!placed || !stream) return { user, sessionId, error: 'no Calls.json request with a stream TwiML' };
          const done = new Promise<{ result?: CallerResult; error?: string }>((resolve) =>
            pending.set(sessionId, resolve),
          );
          callers.send({
            type: 'call',
            id: sessionId,
            url: stream[1],
            token: stream[2],
            callSid: placed.sid,
            accountSid: twilio.accountSid,
            turns: TURNS,
          });
          const onLine = Date.now();
          const outcome = await done;
          return { user, sessionId, onLine: [onLine, Date.now()] as [number, number], ...outcome };
        }),
      );
      const cpu1 = cpuSeconds(server.pid);
      window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
      const buckets1 = await latenessBuckets(server.base);
      const rssPeak = rss.peak();
      rss.close();
      const wallMs = Date.now() - t0;

      // The records: every call must reach completed with its transcript.
      const records = await Promise.all(
        runs.map(async (r) => {
          if (!r.sessionId) return null;
          const deadline = Date.now() + 20_000;
          while (Date.now() < deadline) {
            const res = await api('GET', `/api/calls/${r.sessionId}`, r.user.token);
            if (res.status === 200) {
              const view = (await res.json()) as {
                status: string;
                transcript?: Array<{ role: string; latency?: Latency }>;
              };
              if (view.status === 'completed' && (view.transcript?.length ?? 0) > 0) return view;
            }
            await sleep(200);
          }
          return null;
        }),
      );
      const latencies = records.flatMap((v) =>
        (v?.transcript ?? []).filter((l) => l.role === 'agent' && l.latency).map((l) => l.latency!),
      );
      const results = runs.map((r) => r.result).filter((r): r is CallerResult => !!r);
      const replies = results.flatMap((r) => r.turns.map((t) => t.replyMs));
      const callMinutes = results.reduce((a, r) => a + r.durationMs, 0) / 60_000;
      const cpuS = cpu0 === null || cpu1 === null ? null : Math.round((cpu1 - cpu0) * 100) / 100;
      // How long every call of the level was on the line at once (from the last one's start to the first one's end).
      const spans = runs.map((r) => r.onLine).filter((v): v is [number, number] => !!v);
      const allOnLineMs =
        spans.length === batch.length
          ? Math.max(0, Math.min(...spans.map((v) => v[1])) - Math.max(...spans.map((v) => v[0])))
          : 0;
      const level: VoiceLevel = {
        concurrency,
        calls: batch.length,
        callsPerSecond: CALLS_PER_SECOND,
        allOnLineMs,
        completedWithRecord: records.filter(Boolean).length,
        lostOrStuck: runs.filter((_, i) => !records[i]).map((r) => r.sessionId ?? 'not placed'),
        callerErrors: runs.filter((r) => r.error).map((r) => `${r.sessionId}: ${r.error}`.slice(0, 300)),
        replyMs: stats(replies.filter((v): v is number => v !== null)),
        turnsUnanswered: replies.filter((v) => v === null).length,
        providerMs: stats(latencies.map((l) => l.sttMs + l.llmFirstTokenMs + l.ttsFirstByteMs)),
        overheadMs: stats(latencies.map((l) => l.overheadMs)),
        processingMs: stats(latencies.map((l) => Math.max(0, l.overheadMs - Math.max(0, ENDPOINT_MIN_MS - l.sttMs)))),
        recordTotalMs: stats(latencies.map((l) => l.totalMs)),
        pacingJitterMs: stats(results.flatMap((r) => r.gaps.map((g) => Math.abs(g - 20)))),
        frameLatenessMs: stats(results.flatMap((r) => r.lateness)),
        sendLateness: sendLateness(buckets0, buckets1),
        loopDelayMs: lastLoopDelay,
        callMinutes: Math.round(callMinutes * 100) / 100,
        serverCpuSeconds: cpuS,
        cpuSecondsPerCallMinute: cpuS === null || !callMinutes ? null : Math.round((cpuS / callMinutes) * 100) / 100,
        rssBeforeMb: rssBefore,
        rssPeakMb: rssPeak,
        rssPerCallMb: rssBefore === null ? null : Math.round(((rssPeak - rssBefore) / batch.length) * 10) / 10,
        wallMs,
      };
      levels.push(level);
      console.log(JSON.stringify(level));
      const crash = server.crash();
      if (crash) throw new Error(crash);
    }
    if (hearing) {
      // The same data directory and port (PUBLIC_URL), other providers: the OpenAI-compatible recogniser at the fake …
      await server.stop();
      const withWhisper = await startRealServer({
        dataDir: dir,
        env: { ...env, STT_PROVIDER: 'openai', STT_URL: openai.url, STT_API_KEY: openai.apiKey },
        port,
      });
      try {
        console.log(`bench/voice: ${BYTES_CALLS} calls heard by the OpenAI-compatible recogniser (what it is sent)…`);
        const calls = users.slice(latencyUsers, latencyUsers + BYTES_CALLS).map((user, k) => ({
          user,
          server: registered[latencyUsers + k]!,
          numberId: numbers[latencyUsers + k]!,
          index: latencyUsers + k,
        }));
        bytes = await measureRecogniserBytes({
          server: withWhisper,
          openai,
          twilio,
          calls,
          lines: pcm,
          turns: TURNS,
          callers,
          pending,
          agent: {
            name: 'Amy',
            personaId: `elevenlabs-${eleven.voices[0]!.voice_id}`,
            firstMessage: 'Hello, this is Amy from the clinic. Thank you for taking my call today, I will be brief.',
          },
        });
        console.log(JSON.stringify(bytes));
      } finally {
        await withWhisper.stop();
      }
      // … then offline, as `npm start` runs with nothing configured: the sandbox carrier, pocketsphinx, espeak-ng, the dialogue engine.
      if (!isPocketsphinxInstalled()) failures.push('offline levels not run: pocketsphinx is not installed');
      else {
        const offlineEnv = {
          ...secrets,
          ...dbEnv,
          PUBLIC_URL: env.PUBLIC_URL,
          STT_PROVIDER: 'pocketsphinx',
          MEDIA_UNAUTHENTICATED_PER_ADDRESS: '200',
        };
        const sandboxServer = await startRealServer({ dataDir: dir, env: offlineEnv, port });
        try {
          const first = latencyUsers + BYTES_CALLS;
          const calls = users.slice(first).map((user, k) => ({
            user,
            server: registered[first + k]!,
            numberId: numbers[first + k]!,
            index: first + k,
          }));
          offline = await measureOfflineLevels({ server: sandboxServer, levels: OFFLINE_LEVELS, calls });
        } finally {
          await sandboxServer.stop();
        }
      }
    }
  } catch (err) {
    const cause = err instanceof Error && err.cause ? ` (${String(err.cause)})` : '';
    failures.push(
      `${err instanceof Error ? err.message : String(err)}${cause}${server.crash() ? `; ${server.crash()}` : ''}`.slice(
        0,
        1500,
      ),
    );
  } finally {
    callers.send({ type: 'stop' });
    await stop(callers, 2000);
    await server.stop();
    await database.close();
    await Promise.all([twilio.close(), deepgram.close(), openai.close(), eleven.close()]);
    await pgSchema.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  const profile =
    profileDir && window ? { ...summarizeProfile(findProfile(profileDir), 25, window), window } : undefined;
  if (profile) writeFileSync(join(profileDir!, 'summary.json'), `${JSON.stringify(profile, null, 2)}\n`);

  const checks = levels.length
    ? [
        // Voice-to-voice at the caller: its last speech frame → the agent's first frame, with the reference delays.
        ...(referenceDelays
          ? levels.map((l) => ({
              name: `voice-to-voice at the caller p50 at ${l.concurrency} concurrent calls (reference delays: STT ${REFERENCE_DELAYS.sttMs}, model ${REFERENCE_DELAYS.llmFirstTokenMs}, speech ${REFERENCE_DELAYS.ttsFirstByteMs} ms)`,
              value: l.replyMs.p50,
              target: '≤ 800 ms',
              met: l.replyMs.p50 !== null && l.replyMs.p50 <= 800 && l.turnsUnanswered === 0,
            }))
          : []),
        // Every target at every level, so the top level (150 in full mode) holds them all.
        ...levels.flatMap((l) => [
          {
            name: `our overhead (less the ${ENDPOINT_MIN_MS} ms end-of-turn wait) p50 at ${l.concurrency} concurrent calls`,
            value: l.processingMs.p50,
            target: '≤ 20 ms',
            met: l.processingMs.p50 !== null && l.processingMs.p50 <= 20,
          },
          {
            name: `our overhead (less the ${ENDPOINT_MIN_MS} ms end-of-turn wait) p99 at ${l.concurrency} concurrent calls`,
            value: l.processingMs.p99,
            target: '≤ 50 ms',
            met: l.processingMs.p99 !== null && l.processingMs.p99 <= 50,
          },
        ]),
        // Outgoing pacing is judged where frames go out (the server's own clock); the caller's figures add its process's scheduling.
        ...levels.map((l) => ({
          name: `outgoing frame pacing p99 at ${l.concurrency} (server: lateness against the 20 ms slot, bucket bound)`,
          value: l.sendLateness?.p99AtMostMs ?? null,
          target: '≤ 10 ms',
          met:
            l.sendLateness?.p99AtMostMs !== null &&
            l.sendLateness?.p99AtMostMs !== undefined &&
            l.sendLateness.p99AtMostMs <= 10,
        })),
        ...levels.map((l) => ({
          name: `every call ends completed with its record at ${l.concurrency}`,
          value: `${l.completedWithRecord}/${l.calls}`,
          target: 'all',
          met: l.completedWithRecord === l.calls && l.callerErrors.length === 0,
        })),
      ]
    : [];
  if (bytes)
    checks.push({
      name: 'audio sent to a per-utterance recogniser (OpenAI-compatible) per second of caller speech, greeting and later turns',
      value: bytes.ratio,
      target: '≤ 1.3×',
      met: bytes.ratio !== null && bytes.ratio <= 1.3 && bytes.callerErrors.length === 0,
    });
  for (const l of offline) {
    const placed = l.callsPerSecond === 0 ? ', placed all at once' : '';
    checks.push({
      name: `offline sandbox calls at ${l.concurrency}${placed}: every call completed`,
      value: `${l.completed}/${l.calls}`,
      target: 'all',
      met: l.completed === l.calls,
    });
    // The latency targets are the issue's at 1 and 10 calls placed as a carrier places them; all at once is the lockstep worst case, shown.
    if (l.callsPerSecond === 0) continue;
    checks.push(
      {
        name: `offline sandbox calls at ${l.concurrency}: end of caller speech → agent's first audio p50 (records' totalMs)`,
        value: l.totalMs.p50,
        target: '≤ 700 ms',
        met: l.totalMs.p50 !== null && l.totalMs.p50 <= 700,
      },
      {
        name: `offline sandbox calls at ${l.concurrency}: end of caller speech → agent's first audio p99 (records' totalMs)`,
        value: l.totalMs.p99,
        target: '≤ 1200 ms',
        met: l.totalMs.p99 !== null && l.totalMs.p99 <= 1200,
      },
      {
        name: `offline sandbox calls at ${l.concurrency}: the recogniser's part p50, VAD cut → final (voice_recognition_seconds, bucket bound)`,
        value: l.recogniserAfterCut.p50AtMostMs,
        target: '≤ 200 ms',
        met: l.recogniserAfterCut.p50AtMostMs !== null && l.recogniserAfterCut.p50AtMostMs <= 200,
      },
    );
  }
  const out = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: {
      cores: cpus().length,
      loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
      note:
        loadavg()[0] > cpus().length
          ? 'loaded: load average above the core count, other work shares the machine'
          : 'load average below the core count',
    },
    backend,
    turnsPerCall: TURNS,
    providerDelays: DELAYS,
    levels,
    hearing: { bytes, offline },
    checks,
    failures,
    ...(profile ? { profile } : {}),
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `voice-${backend}.json`), `${JSON.stringify(out, null, 2)}\n`);
  console.log(
    `bench/voice: providers' delays stt ${DELAYS.sttMs} ms + model first token ${DELAYS.llmFirstTokenMs} ms + speech first byte ${DELAYS.ttsFirstByteMs} ms = ${DELAYS.sttMs + DELAYS.llmFirstTokenMs + DELAYS.ttsFirstByteMs} ms`,
  );
  for (const l of levels)
    console.log(
      `  ${l.concurrency} calls (placed ${l.callsPerSecond ? `${l.callsPerSecond} a second` : 'all at once'}, all on the line together for ${(l.allOnLineMs / 1000).toFixed(1)} s): caller speech end → first agent frame p50 ${l.replyMs.p50} / p99 ${l.replyMs.p99} ms; provider p50 ${l.providerMs.p50} ms; record overhead p50 ${l.overheadMs.p50} / p99 ${l.overheadMs.p99} ms (less the end-of-turn wait: ${l.processingMs.p50} / ${l.processingMs.p99} ms); jitter p99 ${l.pacingJitterMs.p99} ms, frame lateness p99 ${l.frameLatenessMs.p99} ms at the caller, ≤ ${l.sendLateness?.p99AtMostMs ?? '–'} ms at the server (${l.sendLateness?.within10MsPct ?? '–'}% within 10 ms; event-loop delay p99 ${l.loopDelayMs?.p99 ?? '–'} / max ${l.loopDelayMs?.max ?? '–'} ms); CPU ${l.cpuSecondsPerCallMinute} s per call-minute; RSS ${l.rssPerCallMb} MB per call; ${l.completedWithRecord}/${l.calls} recorded`,
    );
  if (bytes)
    console.log(
      `  per-utterance recogniser (OpenAI-compatible): ${bytes.sentSeconds} s sent for ${bytes.speechSeconds} s of caller speech (${bytes.ratio}×, ${bytes.bytesPerSpeechSecond} bytes per second of speech; ${bytes.requests} requests, ${bytes.turns} turns)`,
    );
  for (const l of offline)
    console.log(
      `  offline ${l.concurrency} calls${l.callsPerSecond === 0 ? ' placed all at once' : ''}: end of caller speech → first agent audio p50 ${l.totalMs.p50} / p99 ${l.totalMs.p99} ms; record sttMs p50 ${l.sttMs.p50} / p99 ${l.sttMs.p99} ms; recogniser after the cut p50 ≤ ${l.recogniserAfterCut.p50AtMostMs ?? '–'} / p99 ≤ ${l.recogniserAfterCut.p99AtMostMs ?? '–'} ms (${l.recogniserAfterCut.utterances} utterances); lines recognised ${l.linesRecognised}; ${l.completed}/${l.calls} completed`,
    );
  for (const c of checks) console.log(`  ${c.met ? 'ok  ' : 'MISS'} ${c.name}: ${c.value ?? '–'} (target ${c.target})`);
  for (const f of failures) console.log(`  failure: ${f}`);
  process.exitCode = failures.length === 0 && checks.every((c) => c.met) ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => (killAll(), process.exit(130)));
main().catch((err) => {
  console.error(err);
  killAll();
  process.exit(1);
});
