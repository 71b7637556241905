// The voice bench's hearing figures (issue 44), in the same run as its
// latency levels (bench/voice.ts), each on a server restarted on the same data
// directory with other providers:
// - what a per-utterance recogniser is sent: the OpenAI-compatible one
//   (STT_URL at the OpenAI fake, which records each WAV), the bench's callers
//   playing Twilio (silence through the greeting and the answers, as Twilio
//   sends it): seconds of audio sent per second of the callers' speech;
// - offline: sandbox calls (no Twilio, no model, no ElevenLabs: the sandbox
//   carrier's simulated caller speaking the default script with flite,
//   pocketsphinx hearing it, the dialogue engine answering with espeak-ng) at
//   1 and 10 concurrent calls: from the records, the end of the caller's speech
//   to the agent's first audio, and the record's sttMs; from /metrics, the
//   recogniser's own time from the VAD's cut to its final
//   (voice_recognition_seconds).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mulawToPcm, pcmToMulaw } from '../../src/lib/audio.js';
import type { OpenAiFake } from '../../test/support/openai-fake.js';
import { multipartForm } from '../../test/support/multipart.js';
import { signPayload } from '../../test/support/signed-payloads.js';
import type { TwilioFake } from '../../test/support/twilio-fake.js';
import { speechSpanMs } from '../../test/support/voice-audio.js';
import type { SeededUser } from '../seed.js';
import type { CallerResult } from '../workers/voice-callers.js';
import { sleep } from './proc.js';
import type { RunningServer } from './server.js';

type Registered = { name: string; privateKey: string; publicKey: string };
export interface HearingCall {
  user: SeededUser;
  server: Registered;
  numberId: string;
  index: number;
}

export interface RecogniserBytes {
  calls: number;
  turns: number;
  /** Transcription requests (utterances the VAD cut). */
  requests: number;
  sentSeconds: number;
  speechSeconds: number;
  /** Seconds of audio sent per second of caller speech. */
  ratio: number | null;
  /** The same as bytes: WAV data bytes sent (16 kHz PCM16) per second of caller speech. */
  bytesPerSpeechSecond: number | null;
  callerErrors: string[];
}

/** A level of offline sandbox calls: how many, and how fast they are placed (0: all at once). */
export interface OfflineLevelPlan {
  concurrency: number;
  callsPerSecond: number;
}

export interface OfflineLevel {
  concurrency: number;
  /** How fast the level's calls were placed (0: all at once; absent in files written before it: 1). */
  callsPerSecond?: number;
  calls: number;
  completed: number;
  /** Caller lines the transcripts hold word for word (of the lines the records hold). */
  linesRecognised: string;
  /** Records' latency on answered turns: end of caller speech → first agent frame out. */
  totalMs: Stats;
  /** Records' sttMs: end of caller speech → final (the VAD's 200 ms of silence before its cut included). */
  sttMs: Stats;
  /** voice_recognition_seconds over the level: upper bounds (ms) of the buckets holding the median and the 99th percentile. */
  recogniserAfterCut: { utterances: number; p50AtMostMs: number | null; p99AtMostMs: number | null };
  wallMs: number;
  lost: string[];
  /** Calls that ended otherwise than completed: status, outcome, reason, error. */
  notCompleted: string[];
  /** CPU of the server and its finished child processes (decoders, synthesisers) per minute of call. */
  cpuSecondsPerCallMinute: number | null;
}

export interface Stats {
  n: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length
    ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)
    : null;
};
export const stats = (values: number[]): Stats => ({
  n: values.length,
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length ? Math.round(Math.max(...values)) : null,
});

const api =
  (base: string, token: string) =>
  async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
    });

/** The OpenAI-compatible recogniser's requests while the bench's callers play Twilio: audio sent per second of their speech. */
export async function measureRecogniserBytes(o: {
  server: RunningServer;
  openai: OpenAiFake;
  twilio: TwilioFake;
  calls: HearingCall[];
  lines: Int16Array[];
  turns: number;
  callers: ChildProcess;
  pending: Map<string, (r: { result?: CallerResult; error?: string }) => void>;
  agent: Record<string, unknown>;
}): Promise<RecogniserBytes> {
  o.openai.transcriptions.length = 0;
  o.openai.transcripts.length = 0;
  // The fake answers each utterance with a line ending a sentence, as Whisper punctuates.
  for (let i = 0; i < 200; i++)
    o.openai.transcripts.push(i % 2 ? 'Thank you, that is all I needed.' : 'What are your opening hours on Friday?');
  const results = await Promise.all(
    o.calls.map(async ({ user, server, numberId, index }, k) => {
      await sleep(k * 300);
      const jwt = await signPayload(server, {
        agent: o.agent,
        contact: { name: 'Grace', phone: `+1415888${String(index).padStart(4, '0')}` },
        type: 'prompt',
        prompt: 'Answer questions about the clinic briefly.',
        phoneNumberId: numberId,
      });
      const res = await api(o.server.base, user.token)('POST', '/api/session/call', { server: server.name, jwt });
      if (res.status !== 204)
        return { error: `POST /api/session/call: ${res.status} ${(await res.text()).slice(0, 200)}` };
      const sessionId = res.headers.get('x-session-id')!;
      const placed = o.twilio.calls.find((c) => c.statusCallback?.endsWith(`/${sessionId}`));
      const stream = placed && /<Stream url="([^"]+)"><Parameter name="token" value="([^"]+)"\/>/.exec(placed.twiml);
      if (!placed || !stream) return { error: 'no Calls.json request with a stream TwiML' };
      const done = new Promise<{ result?: CallerResult; error?: string }>((resolve) =>
        o.pending.set(sessionId, resolve),
      );
      o.callers.send({
        type: 'call',
        id: sessionId,
        url: stream[1],
        token: stream[2],
        callSid: placed.sid,
        accountSid: o.twilio.accountSid,
        turns: o.turns,
      });
      return done;
    }),
  );
  // What the far end heard of each line: μ-law and back, as the callers send it.
  const spans = o.lines.map((pcm) => speechSpanMs(mulawToPcm(pcmToMulaw(pcm))) / 1000);
  const turnsSpoken = results.reduce((n, r) => n + (r.result?.turns.length ?? 0), 0);
  const speechSeconds = results.reduce(
    (s, r) => s + (r.result?.turns ?? []).reduce((a, _, t) => a + spans[t % spans.length]!, 0),
    0,
  );
  await sleep(1500); // the last utterances' requests
  const sentSeconds = o.openai.transcriptions.reduce(
    (s, r) => s + (r.wav ? r.wav.samples.length / r.wav.sampleRate : 0),
    0,
  );
  const sentBytes = o.openai.transcriptions.reduce((s, r) => s + (r.wav ? r.wav.samples.length * 2 : 0), 0);
  return {
    calls: o.calls.length,
    turns: turnsSpoken,
    requests: o.openai.transcriptions.length,
    sentSeconds: Math.round(sentSeconds * 100) / 100,
    speechSeconds: Math.round(speechSeconds * 100) / 100,
    ratio: speechSeconds ? Math.round((sentSeconds / speechSeconds) * 100) / 100 : null,
    bytesPerSpeechSecond: speechSeconds ? Math.round(sentBytes / speechSeconds) : null,
    callerErrors: results.filter((r) => r.error).map((r) => r.error!.slice(0, 300)),
  };
}

/** A clinic for one offline caller: its knowledge base with opening hours and a sandbox Calendly (as the README's sandbox call). */
async function clinic(base: string, call: HearingCall): Promise<{ kbId: string; integrationId: string }> {
  const request = api(base, call.user.token);
  const kb = (await (await request('PUT', '/api/knowledge-bases', { name: 'Clinic' })).json()) as { id: string };
  const form = multipartForm([
    {
      filename: 'hours.txt',
      content: 'Opening hours: we are open Monday to Friday from nine to five.',
      contentType: 'text/plain',
    },
  ]);
  const upload = await request('POST', `/api/knowledge-bases/${kb.id}`, form.payload, form.headers);
  if (upload.status !== 200) throw new Error(`knowledge upload: ${upload.status} ${await upload.text()}`);
  const integration = await request('PUT', '/api/integrations', {
    type: 'calendly',
    data: {
      accessToken: `sandbox_pat_bench_${String(call.index).padStart(4, '0')}`,
      eventTypeUrl: 'https://calendly.com/clinic/30min',
    },
  });
  if (integration.status !== 200) throw new Error(`integration: ${integration.status} ${await integration.text()}`);
  return { kbId: kb.id, integrationId: ((await integration.json()) as { id: string }).id };
}

/** CPU seconds of a process and of its children it has waited for (utime, stime, cutime, cstime). */
function cpuWithChildren(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

/** voice_recognition_seconds' cumulative buckets (le in ms → utterances). */
async function recognitionBuckets(base: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^voice_recognition_seconds_bucket\{le="([^"]+)"\} (\d+)/gm))
    buckets.set(m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Math.round(Number(m[1]) * 1000), Number(m[2]));
  return buckets;
}

function bucketPercentiles(
  before: Map<number, number>,
  after: Map<number, number>,
): OfflineLevel['recogniserAfterCut'] {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const utterances = counts.at(-1) ?? 0;
  const at = (p: number) => {
    const i = counts.findIndex((c) => c >= p * utterances);
    return !utterances || i < 0 || !Number.isFinite(bounds[i]!) ? null : bounds[i]!;
  };
  return { utterances, p50AtMostMs: at(0.5), p99AtMostMs: at(0.99) };
}

interface CallView {
  status: string;
  durationSeconds?: number;
  outcome?: string;
  reason?: string;
  error?: unknown;
  transcript?: Array<{ role: string; text: string; latency?: { totalMs: number; sttMs: number } }>;
}

const SCRIPT = [
  'Hello, who is this?',
  'Can you tell me your opening hours please?',
  'I would like to book a meeting for next Tuesday.',
  'No thank you, goodbye.',
];

/**
 * Sandbox calls at each level, placed at the level's rate (one a second is
 * Twilio's default rate for an account's calls; 0 places them all at once,
 * which once had 2 of 10 greetings refused by the local speech queue when it
 * held a fixed 8 call sentences), until every one has ended.
 */
export async function measureOfflineLevels(o: {
  server: RunningServer;
  levels: OfflineLevelPlan[];
  calls: HearingCall[];
}): Promise<OfflineLevel[]> {
  const clinics = await Promise.all(o.calls.map((c) => clinic(o.server.base, c)));
  const out: OfflineLevel[] = [];
  let offset = 0;
  for (const { concurrency, callsPerSecond } of o.levels) {
    const gapMs = callsPerSecond > 0 ? 1000 / callsPerSecond : 0;
    const batch = o.calls.slice(offset, offset + concurrency).map((c, k) => ({ ...c, ...clinics[offset + k]! }));
    offset += concurrency;
    console.log(
      `bench/voice: offline, ${concurrency} concurrent sandbox call${concurrency === 1 ? '' : 's'} placed ${callsPerSecond ? `${callsPerSecond} a second` : 'all at once'} (pocketsphinx, espeak-ng, the dialogue engine)…`,
    );
    const before = await recognitionBuckets(o.server.base);
    const cpu0 = cpuWithChildren(o.server.pid);
    const t0 = Date.now();
    const views = await Promise.all(
      batch.map(async (c, k) => {
        await sleep(k * gapMs);
        const request = api(o.server.base, c.user.token);
        const jwt = await signPayload(c.server, {
          agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
          // From …1000 up: the sandbox carrier's callees ending 0000–0004 ring out, are busy, a voicemail or an opt-out.
          contact: { name: 'Grace', phone: `+1415999${1000 + c.index}` },
          type: 'prompt',
          prompt: 'Answer questions about the clinic and book meetings.',
          knowledgeBase: { id: c.kbId },
          integrations: [c.integrationId],
          phoneNumberId: c.numberId,
        });
        const res = await request('POST', '/api/session/call', { server: c.server.name, jwt });
        if (res.status !== 204)
          return { error: `POST /api/session/call: ${res.status} ${(await res.text()).slice(0, 200)}` };
        const sessionId = res.headers.get('x-session-id')!;
        const deadline = Date.now() + 150_000;
        while (Date.now() < deadline) {
          await sleep(1000);
          const view = (await (await request('GET', `/api/calls/${sessionId}`)).json()) as CallView;
          // The status is final a moment before the record (transcript, latency) is stored: wait for both, or
          // a call measured alone counts no line at all.
          if (
            view.status === 'completed'
              ? view.transcript
              : ['failed', 'no_answer', 'busy', 'canceled'].includes(view.status)
          )
            return { view, sessionId };
        }
        return { error: `${sessionId} still running after 150 s` };
      }),
    );
    const after = await recognitionBuckets(o.server.base);
    const cpu1 = cpuWithChildren(o.server.pid);
    const ended = views.filter((v): v is { view: CallView; sessionId: string } => 'view' in v);
    const callMinutes = ended.reduce((m, v) => m + (v.view.durationSeconds ?? 0) / 60, 0);
    const lines = ended.flatMap((v) => v.view.transcript ?? []);
    const answered = lines.filter((l) => l.role === 'agent' && l.latency).map((l) => l.latency!);
    const callerLines = lines.filter((l) => l.role === 'caller' && l.text.trim());
    out.push({
      concurrency,
      callsPerSecond,
      calls: batch.length,
      completed: ended.filter((v) => v.view.status === 'completed').length,
      linesRecognised: `${callerLines.filter((l) => SCRIPT.includes(l.text)).length}/${callerLines.length}`,
      totalMs: stats(answered.map((l) => l.totalMs)),
      sttMs: stats(answered.map((l) => l.sttMs)),
      recogniserAfterCut: bucketPercentiles(before, after),
      wallMs: Date.now() - t0,
      lost: views.filter((v) => 'error' in v).map((v) => (v as { error: string }).error),
      cpuSecondsPerCallMinute:
        cpu0 === null || cpu1 === null || !callMinutes ? null : Math.round(((cpu1 - cpu0) / callMinutes) * 100) / 100,
      notCompleted: ended
        .filter((v) => v.view.status !== 'completed')
        .map((v) =>
          `${v.sessionId}: ${v.view.status} ${v.view.outcome ?? ''} ${v.view.reason ?? ''} ${v.view.error ? JSON.stringify(v.view.error) : ''}`.trim(),
        ),
    });
    console.log(JSON.stringify(out.at(-1)));
  }
  return out;
}
