// Voice mode of an agent test (DESIGN.md "Agent tests"): a web call of the
// test's agent at real pace, the caller's lines spoken by the offline caller
// voice (flite or espeak-ng) as a browser's 16 kHz microphone would send them,
// recognised by the server's recogniser, answered by the whole voice agent
// (turn-taking, speech, tools, pathway), then read back from the call's
// record: its transcript with each answer's latency, tool calls, outcome,
// path and variables. A free web call, so voice tests count against the web
// calls' limits (WEB_CALL_CONCURRENCY_PER_USER, the hourly limit).
import WebSocket from 'ws';
import type { OfflineCallerVoice } from '../../providers/call-speech/offline-caller.js';
import type { CallView } from '../calls/call-views.js';
import type { WebCallInput, WebCallStarted } from '../voice-agent/web-calls.js';
import type { Conversation } from './checks.js';

export interface VoiceConversationDeps {
  startWebCall(userId: string, input: WebCallInput): Promise<WebCallStarted>;
  callView(userId: string, sessionId: string): Promise<CallView>;
  /** The caller's voice; null: no synthesiser is installed (voice mode cannot run). */
  callerVoice: OfflineCallerVoice | null;
}

const FRAME_SAMPLES = 320; // 20 ms at 16 kHz
/** Silence after each line, so turn-taking hears the caller stop. */
const SILENCE_AFTER_MS = 1200;
/** Longest wait for the agent's greeting or answer. */
const ANSWER_TIMEOUT_MS = 30_000;
const FINAL = new Set(['completed', 'failed', 'busy', 'no_answer', 'canceled']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One conversation by voice; `lines` are spoken in order (at most `maxTurns`). */
export async function voiceConversation(
  deps: VoiceConversationDeps,
  userId: string,
  input: WebCallInput,
  lines: string[],
  signal: AbortSignal,
): Promise<Conversation> {
  const voice = deps.callerVoice;
  if (!voice) throw new Error('voice mode needs flite or espeak-ng installed to speak the caller');
  const started = await deps.startWebCall(userId, input);
  const ws = new WebSocket(started.url);
  let agentFinals = 0;
  let lastAudioAt = 0;
  let ended = false;
  ws.on('message', (data, isBinary) => {
    if (isBinary) {
      lastAudioAt = Date.now();
      return;
    }
    const message = JSON.parse(String(data)) as { type: string; role?: string; final?: boolean; name?: string };
    // A player echoes each mark once the audio before it has played: the audio came paced, so it has about played.
    if (message.type === 'mark') ws.send(JSON.stringify({ type: 'mark', name: message.name }));
    if (message.type === 'transcript' && message.role === 'agent' && message.final) agentFinals++;
    if (message.type === 'ended') ended = true;
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const finished = () => ended || ws.readyState !== WebSocket.OPEN;
  /** Until the agent has finished one more reply than `before` and gone quiet, or the call ended. */
  const answered = async (before: number) => {
    const deadline = Date.now() + ANSWER_TIMEOUT_MS;
    while (!finished() && Date.now() < deadline) {
      signal.throwIfAborted();
      if (agentFinals > before && Date.now() - lastAudioAt > 400) return;
      await sleep(50);
    }
  };
  try {
    await answered(0);
    for (const line of lines) {
      if (finished()) break;
      const before = agentFinals;
      const speech = await voice.speak(line, signal, 16_000);
      const total = new Int16Array(
        Math.ceil(speech.length / FRAME_SAMPLES) * FRAME_SAMPLES + (SILENCE_AFTER_MS / 20) * FRAME_SAMPLES,
      );
      total.set(speech);
      const t0 = Date.now();
      for (let i = 0, n = 1; i + FRAME_SAMPLES <= total.length && !finished(); i += FRAME_SAMPLES, n++) {
        const frame = total.subarray(i, i + FRAME_SAMPLES);
        ws.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
        await sleep(Math.max(0, t0 + n * 20 - Date.now()));
      }
      await answered(before);
    }
    if (!finished()) ws.send(JSON.stringify({ type: 'hangup' }));
    await Promise.race([closed, sleep(10_000)]);
  } finally {
    if (ws.readyState === WebSocket.OPEN) ws.close();
  }
  // The record is written once the call has ended.
  let view = await deps.callView(userId, started.sessionId);
  for (let i = 0; i < 150 && !(FINAL.has(view.status) && view.transcript); i++) {
    await sleep(100);
    view = await deps.callView(userId, started.sessionId);
  }
  return fromRecord(view);
}

type RecordLine = { role?: string; text?: string; latency?: { totalMs?: number }; node?: string };

/** What a call's record says, as a test's conversation. */
export function fromRecord(view: CallView): Conversation {
  const transcript = ((view.transcript ?? []) as RecordLine[]).map((l) => ({
    role: l.role === 'agent' ? ('agent' as const) : ('caller' as const),
    text: String(l.text ?? ''),
    ...(typeof l.latency?.totalMs === 'number' ? { latencyMs: l.latency.totalMs } : {}),
    ...(l.node ? { node: l.node } : {}),
  }));
  const toolCalls = ((view.toolCalls ?? []) as Array<{ name?: string; arguments?: unknown; result?: unknown }>).map(
    (t) => ({ name: String(t.name ?? ''), arguments: t.arguments, result: t.result }),
  );
  const pathway = view.pathway as { path?: Array<{ node: string }>; variables?: Record<string, unknown> } | undefined;
  return {
    transcript,
    toolCalls,
    outcome: view.outcome ?? view.status,
    ...(view.reason ? { reason: view.reason } : {}),
    ...(pathway?.path ? { path: pathway.path.map((p) => p.node) } : {}),
    ...(pathway?.variables ? { variables: pathway.variables } : view.variables ? { variables: view.variables } : {}),
  };
}
