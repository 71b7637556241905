// A test's expectations against what happened in its conversation: one check
// per expectation (each phrase, each tool call its own), with the expected
// and the actual value, so a failure says what differed.
import type { Check, TestExpectations } from './schemas.js';

/** What a conversation produced, text or voice mode alike. */
export interface Conversation {
  transcript: Array<{ role: 'agent' | 'caller'; text: string; latencyMs?: number; node?: string }>;
  toolCalls: Array<{ name: string; arguments: unknown; result: unknown }>;
  outcome: string;
  reason?: string;
  /** Pathway node ids visited, in order (none: the agent has no pathway). */
  path?: string[];
  variables?: Record<string, unknown>;
  analysis?: { success?: boolean | null; data?: Record<string, unknown> } | null;
}

/** Lower case, punctuation to spaces, spaces collapsed: "Opening hours: 9-5!" becomes "opening hours 9 5". */
export const normalize = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `actual` holds everything `expected` has: objects field by field (more fields allowed), arrays item by item, strings case-insensitively, numbers exactly. */
export function partialMatch(expected: unknown, actual: unknown): boolean {
  if (isObject(expected))
    return isObject(actual) && Object.entries(expected).every(([k, v]) => partialMatch(v, actual[k]));
  if (Array.isArray(expected))
    return (
      Array.isArray(actual) && expected.length === actual.length && expected.every((v, i) => partialMatch(v, actual[i]))
    );
  if (typeof expected === 'string' && typeof actual === 'string')
    return expected.toLowerCase() === actual.toLowerCase();
  // A number or boolean given as text by one side ("3" against 3) is the same value.
  if (typeof expected !== typeof actual && expected !== null && actual !== null && actual !== undefined)
    return String(expected).toLowerCase() === String(actual).toLowerCase();
  return expected === actual;
}

/** `wanted` appears in `seen` in this order, others allowed between. */
function inOrder(wanted: string[], seen: string[]): boolean {
  let i = 0;
  for (const s of seen) if (s === wanted[i]) i++;
  return i === wanted.length;
}

export function runChecks(expect: TestExpectations, c: Conversation): Check[] {
  const checks: Check[] = [];
  const agentText = normalize(
    c.transcript
      .filter((l) => l.role === 'agent')
      .map((l) => l.text)
      .join(' \n '),
  );
  const calledNames = c.toolCalls.map((t) => t.name);
  if (expect.outcome !== undefined)
    checks.push({
      name: 'outcome',
      passed: c.outcome === expect.outcome,
      expected: expect.outcome,
      actual: c.reason ? `${c.outcome} (${c.reason})` : c.outcome,
    });
  const used = new Set<number>();
  (expect.toolCalls ?? []).forEach((want, i) => {
    const index = c.toolCalls.findIndex(
      (t, j) =>
        !used.has(j) &&
        t.name === want.name &&
        (want.arguments === undefined || partialMatch(want.arguments, t.arguments)),
    );
    if (index >= 0) used.add(index);
    const sameName = c.toolCalls.filter((t) => t.name === want.name);
    checks.push({
      name: `toolCalls[${i}]`,
      passed: index >= 0,
      expected: want,
      actual:
        index >= 0
          ? { name: c.toolCalls[index]!.name, arguments: c.toolCalls[index]!.arguments }
          : sameName.length
            ? sameName.map((t) => ({ name: t.name, arguments: t.arguments }))
            : calledNames,
    });
  });
  (expect.noToolCalls ?? []).forEach((name, i) => {
    const calls = c.toolCalls.filter((t) => t.name === name);
    checks.push({
      name: `noToolCalls[${i}]`,
      passed: calls.length === 0,
      expected: `${name} never called`,
      actual: calls.length ? calls.map((t) => ({ name: t.name, arguments: t.arguments })) : calledNames,
    });
  });
  (expect.says ?? []).forEach((phrase, i) => {
    const passed = agentText.includes(normalize(phrase));
    checks.push({ name: `says[${i}]`, passed, expected: phrase, actual: passed ? phrase : agentLines(c) });
  });
  (expect.neverSays ?? []).forEach((phrase, i) => {
    const line = c.transcript.find((l) => l.role === 'agent' && normalize(l.text).includes(normalize(phrase)));
    checks.push({
      name: `neverSays[${i}]`,
      passed: !line,
      expected: `never "${phrase}"`,
      actual: line ? line.text : null,
    });
  });
  if (expect.variables !== undefined) {
    const actual = c.variables ?? {};
    for (const [name, value] of Object.entries(expect.variables))
      checks.push({
        name: `variables.${name}`,
        passed: name in actual && partialMatch(value, actual[name]),
        expected: value,
        actual: name in actual ? actual[name] : null,
      });
  }
  if (expect.path !== undefined)
    checks.push({
      name: 'path',
      passed: inOrder(expect.path, c.path ?? []),
      expected: expect.path,
      actual: c.path ?? [],
    });
  if (expect.analysis !== undefined) {
    const a = c.analysis ?? null;
    if (expect.analysis.success !== undefined)
      checks.push({
        name: 'analysis.success',
        passed: a?.success === expect.analysis.success,
        expected: expect.analysis.success,
        actual: a ? (a.success ?? null) : 'no analysis',
      });
    for (const [field, value] of Object.entries(expect.analysis.data ?? {}))
      checks.push({
        name: `analysis.data.${field}`,
        passed: a?.data !== undefined && field in a.data && partialMatch(value, a.data[field]),
        expected: value,
        actual: a?.data && field in a.data ? a.data[field] : null,
      });
  }
  if (expect.maxTurns !== undefined) {
    // Stopped by the limit with lines (or a goal) left: the agent had not finished within it.
    const turns = c.transcript.filter((l) => l.role === 'caller').length;
    const stopped = c.reason === 'max_turns';
    checks.push({
      name: 'maxTurns',
      passed: turns <= expect.maxTurns && !stopped,
      expected: expect.maxTurns,
      actual: stopped ? `${turns} (stopped there, not finished)` : turns,
    });
  }
  if (expect.maxLatencyMs !== undefined) {
    const latencies = c.transcript.flatMap((l) =>
      l.role === 'agent' && l.latencyMs !== undefined ? [l.latencyMs] : [],
    );
    const worst = latencies.length ? Math.max(...latencies) : null;
    checks.push({
      name: 'maxLatencyMs',
      passed: worst !== null && worst <= expect.maxLatencyMs,
      expected: expect.maxLatencyMs,
      actual: worst,
    });
  }
  return checks;
}

const agentLines = (c: Conversation) => c.transcript.filter((l) => l.role === 'agent').map((l) => l.text);
