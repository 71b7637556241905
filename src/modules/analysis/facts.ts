// What an analyser reads of an ended call: its call record (the JSON the
// calls service wrote into the `calls` store) reduced to the transcript, the
// tool calls, the pathway's variables and how it ended; and the per-call
// figures of the `performance-metrics` record (turns, interruptions, answer
// latency), computed from the same lines.
import { isUnclear } from '../../providers/language-model/sandbox.js';

export interface FactLine {
  role: 'agent' | 'caller';
  text: string;
  /** ms since the call started, when the voice agent recorded it. */
  startMs?: number;
  interrupted?: boolean;
  /** End of caller speech to the agent's first audio (the voice agent's `latency.totalMs`). */
  latencyMs?: number;
}

export interface FactToolCall {
  name: string;
  arguments: unknown;
  result: unknown;
  atMs?: number;
}

export interface CallFacts {
  sessionId: string;
  agent: { id?: string; name: string };
  contact: { name?: string; phone?: string };
  direction: string;
  status: string;
  outcome: string | null;
  durationSeconds: number;
  /** When the call ended (ms): "tomorrow" is relative to it. */
  endedAt: number;
  transcript: FactLine[];
  toolCalls: FactToolCall[];
  /** The pathway's variables at the end of the call, then the call's own (a pathway's win). */
  variables: Record<string, string | number | boolean>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The facts of a call record (records of external audio servers name the caller `contact` and carry no times). */
export function callFacts(sessionId: string, record: Record<string, unknown>, fallbackEndedAt: number): CallFacts {
  const lines = Array.isArray(record.transcript) ? record.transcript : [];
  const transcript: FactLine[] = [];
  for (const raw of lines) {
    if (!isObject(raw) || typeof raw.text !== 'string') continue;
    const line: FactLine = { role: raw.role === 'agent' ? 'agent' : 'caller', text: raw.text };
    if (typeof raw.startMs === 'number') line.startMs = raw.startMs;
    if (raw.interrupted === true) line.interrupted = true;
    const latency = isObject(raw.latency) ? raw.latency.totalMs : undefined;
    if (typeof latency === 'number' && Number.isFinite(latency)) line.latencyMs = latency;
    transcript.push(line);
  }
  const toolCalls: FactToolCall[] = (Array.isArray(record.toolCalls) ? record.toolCalls : [])
    .filter(isObject)
    .map((t) => ({
      name: String(t.name ?? ''),
      arguments: t.arguments,
      result: t.result,
      ...(typeof t.atMs === 'number' ? { atMs: t.atMs } : {}),
    }));
  const variables: CallFacts['variables'] = {};
  for (const source of [record.variables, isObject(record.pathway) ? record.pathway.variables : undefined])
    if (isObject(source))
      for (const [name, value] of Object.entries(source))
        if (
          typeof value === 'string' ||
          typeof value === 'boolean' ||
          (typeof value === 'number' && Number.isFinite(value))
        )
          variables[name] = value;
  const agent = isObject(record.agent) ? record.agent : {};
  const contact = isObject(record.contact) ? record.contact : {};
  const ended = typeof record.ended_at === 'string' ? Date.parse(record.ended_at) : Number.NaN;
  return {
    sessionId,
    agent: {
      name: typeof agent.name === 'string' ? agent.name : 'agent',
      ...(typeof agent.id === 'string' ? { id: agent.id } : {}),
    },
    contact: {
      ...(typeof contact.name === 'string' ? { name: contact.name } : {}),
      ...(typeof record.to === 'string' && record.direction !== 'inbound' ? { phone: record.to } : {}),
      ...(typeof record.from === 'string' && record.direction === 'inbound' ? { phone: record.from } : {}),
    },
    direction: typeof record.direction === 'string' ? record.direction : 'outbound',
    status: typeof record.status === 'string' ? record.status : 'completed',
    outcome: typeof record.outcome === 'string' ? record.outcome : null,
    durationSeconds: typeof record.duration_seconds === 'number' ? record.duration_seconds : 0,
    endedAt: Number.isFinite(ended) ? ended : fallbackEndedAt,
    transcript,
    toolCalls,
    variables,
  };
}

/** The caller's lines that carry words (not a recogniser's "(unclear)"). */
export function callerLines(facts: CallFacts): FactLine[] {
  return facts.transcript.filter((l) => l.role === 'caller' && l.text.trim() !== '' && !isUnclear(l.text));
}

/** Nearest-rank percentile of `values` (0 < p <= 100), or null for none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Turns (caller lines), interruptions (agent lines cut by the caller) and answer latency of a call. */
export function callFigures(facts: CallFacts): {
  turns: number;
  interruptions: number;
  latency: { p50Ms: number | null; p95Ms: number | null };
} {
  const latencies = facts.transcript.flatMap((l) => (l.latencyMs !== undefined ? [Math.round(l.latencyMs)] : []));
  return {
    turns: facts.transcript.filter((l) => l.role === 'caller').length,
    interruptions: facts.transcript.filter((l) => l.role === 'agent' && l.interrupted).length,
    latency: { p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95) },
  };
}
