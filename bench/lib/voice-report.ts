// The "Voice agent" section of BENCHMARKS.md, from bench/results/voice-<backend>.json
// (bench/voice.ts). It sits between markers, so `--only=voice` replaces only
// it and a run of the other scenarios keeps it (each file carries its date).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VoiceLevel } from '../voice.js';
import type { OfflineLevel, RecogniserBytes } from './voice-hearing.js';

const START = '<!-- voice-agent: generated from bench/results/voice-*.json by bench/lib/voice-report.ts -->';
const END = '<!-- /voice-agent -->';

interface VoiceFile {
  date: string;
  mode: string;
  machine: { cores: number; loadAverage: number[]; note: string };
  backend: string;
  turnsPerCall: number;
  providerDelays: { sttMs: number; llmFirstTokenMs: number; ttsFirstByteMs: number };
  levels: VoiceLevel[];
  /** bench/lib/voice-hearing.ts (absent in files written before it, or with --no-hearing). */
  hearing?: { bytes: RecogniserBytes | null; offline: OfflineLevel[] };
  checks: Array<{ name: string; value: unknown; target: string; met: boolean }>;
  failures: string[];
}

const v = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));

export function renderVoiceSection(root: string): string[] {
  const files = ['sqlite', 'postgres'].map((b) => join(root, 'bench', 'results', `voice-${b}.json`)).filter(existsSync);
  if (!files.length) return [];
  const lines = [START, '## Voice agent (bench/voice.ts, `npm run bench -- --only=voice`)', ''];
  lines.push(
    'Real server (`node dist/server.js`), POST /api/session/call carried by the built-in voice agent through the Twilio fake;',
    'the Deepgram, OpenAI-compatible and ElevenLabs fakes answer with fixed delays. Callers in their own process speak flite',
    'speech as 20 ms μ-law frames at real pace, echo marks and hang up after their turns. "Reply" is measured at the caller:',
    "its last speech frame sent → the first agent frame received. The call records' `overheadMs` is everything beyond the",
    "providers' time, including the end-of-turn wait (`VOICE_ENDPOINT_MIN_MS` after speech, 500 ms, less what STT took);",
    '"ours" subtracts that wait: the server\'s own processing. Pacing: |inter-arrival − 20 ms| of agent frames; lateness:',
    "each frame against its 20 ms slot from its utterance's first frame (the sink may run 40 ms ahead, so bursts of 2–3",
    "frames at an utterance's start count in the inter-arrival figure but not as lateness). Both are stamped in the callers'",
    'process, so they include its scheduling. "Sent late" is outgoing pacing where it happens: the server\'s',
    "`voice_frame_lateness_seconds` histogram, each frame's send time against its slot on the 20 ms timeline (less the",
    '40 ms lead); shown as the histogram bucket holding the 99th percentile, and the share of frames within 10 ms.',
    "A level's calls are placed 10 a second (carriers admit outbound calls at a limited rate: Twilio queues an account's",
    'calls at 1 a second unless raised), then all of them are on the line together for the time shown;',
    '`--calls-per-second=0` places them all at once (the lockstep worst case, `bench/ANALYSIS.md`).',
    '',
  );
  for (const file of files) {
    const r = JSON.parse(readFileSync(file, 'utf8')) as VoiceFile;
    const d = r.providerDelays;
    lines.push(
      `### ${r.backend} — ${r.date.slice(0, 16).replace('T', ' ')} UTC, ${r.mode} mode, ${r.turnsPerCall} turns per call, ${r.machine.cores} cores, load average ${r.machine.loadAverage.join(' / ')} at the end (${r.machine.note})`,
      '',
      `Providers' configured delays: STT result ${d.sttMs} ms after the utterance (plus the fake's own endpointing window) + model first token ${d.llmFirstTokenMs} ms + speech first byte ${d.ttsFirstByteMs} ms = ${d.sttMs + d.llmFirstTokenMs + d.ttsFirstByteMs} ms.`,
      '',
      '| concurrent calls | reply at the caller p50 / p99 ms | providers (record) p50 / p99 ms | record overheadMs p50 / p99 | ours (less the end-of-turn wait) p50 / p99 ms | record totalMs p50 / p99 | pacing jitter p99 ms (caller) | frame lateness p99 ms (caller) | sent late p99 ms (server) | server CPU s per call-minute | RSS MB per call | completed with record |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const l of r.levels) {
      lines.push(
        `| ${l.concurrency}${l.callsPerSecond === undefined ? '' : ` (${l.callsPerSecond ? `${l.callsPerSecond}/s` : 'at once'}, all on ${v(Math.round(l.allOnLineMs / 100) / 10)} s)`} | ${v(l.replyMs.p50)} / ${v(l.replyMs.p99)}${l.turnsUnanswered ? ` (${l.turnsUnanswered} unanswered)` : ''} | ${v(l.providerMs.p50)} / ${v(l.providerMs.p99)} | ${v(l.overheadMs.p50)} / ${v(l.overheadMs.p99)} | ${v(l.processingMs.p50)} / ${v(l.processingMs.p99)} | ${v(l.recordTotalMs.p50)} / ${v(l.recordTotalMs.p99)} | ${v(l.pacingJitterMs.p99)} | ${v(l.frameLatenessMs?.p99)} | ${l.sendLateness ? `≤ ${v(l.sendLateness.p99AtMostMs)} (${v(l.sendLateness.within10MsPct)}% ≤ 10)` : '–'} | ${v(l.cpuSecondsPerCallMinute)} | ${v(l.rssPerCallMb)} | ${l.completedWithRecord}/${l.calls} |`,
      );
    }
    lines.push(...hearingLines(r.hearing));
    lines.push(
      '',
      ...r.checks.map(
        (c) => `- ${c.met ? 'met' : '**MISSED**'}: ${c.name}: ${v(c.value as number)} (target ${c.target})`,
      ),
    );
    if (r.failures.length) lines.push(...r.failures.map((f) => `- failure: ${f.replace(/\n/g, ' ')}`));
    lines.push('');
  }
  lines.push(END);
  return lines;
}

/** What the recognisers hear, and offline sandbox calls (bench/lib/voice-hearing.ts). */
function hearingLines(hearing: VoiceFile['hearing']): string[] {
  if (!hearing) return [];
  const out: string[] = [];
  const b = hearing.bytes;
  if (b) {
    out.push(
      '',
      `What a per-utterance recogniser is sent (the OpenAI-compatible one, at the OpenAI fake; the same callers, silent through the greeting and the answers as Twilio is): ${b.sentSeconds} s of audio in ${b.requests} requests for ${b.speechSeconds} s of caller speech over ${b.turns} turns of ${b.calls} calls: **${v(b.ratio)}×** (${v(b.bytesPerSpeechSecond)} WAV bytes per second of speech; the speech of a line is from its first to its last 100 ms above -40 dBFS).`,
    );
  }
  if (hearing.offline.length) {
    out.push(
      '',
      `Offline (a server with nothing configured, as \`npm start\`: the sandbox carrier's simulated caller speaking the default script with flite, pocketsphinx, the dialogue engine, espeak-ng; calls placed one a second, then 10 all at once, where every greeting must be spoken; from the records: end of caller speech → the agent's first frame; sttMs: end of caller speech → final, which holds the VAD's 200 ms of silence before it cuts; "after the cut": \`voice_recognition_seconds\`, bucket bounds):`,
      '',
      '| concurrent sandbox calls | end of caller speech → first agent audio p50 / p99 ms | record sttMs p50 / p99 ms | recogniser after the cut p50 / p99 ms | caller lines recognised | completed |',
      '|---:|---:|---:|---:|---:|---:|',
      ...hearing.offline.map(
        (l) =>
          `| ${l.concurrency}${l.callsPerSecond === 0 ? ' (all at once)' : l.callsPerSecond ? ` (${l.callsPerSecond}/s)` : ''} | ${v(l.totalMs.p50)} / ${v(l.totalMs.p99)} | ${v(l.sttMs.p50)} / ${v(l.sttMs.p99)} | ≤ ${v(l.recogniserAfterCut.p50AtMostMs)} / ≤ ${v(l.recogniserAfterCut.p99AtMostMs)} (${l.recogniserAfterCut.utterances} utterances) | ${l.linesRecognised} | ${l.completed}/${l.calls} |`,
      ),
    );
  }
  return out;
}

/** Puts the voice section into BENCHMARKS.md in place of the previous one (or at the end), leaving the rest as it is. */
export function spliceVoiceSection(root: string): void {
  const path = join(root, 'BENCHMARKS.md');
  const section = renderVoiceSection(root);
  if (!section.length) return;
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  const next =
    start >= 0 && end > start
      ? `${text.slice(0, start)}${section.join('\n')}${text.slice(end + END.length)}`
      : `${text.replace(/\n*$/, '\n\n')}${section.join('\n')}\n`;
  writeFileSync(path, next);
}
