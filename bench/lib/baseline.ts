// The regression guard: bench/baseline.json keeps the last accepted server CPU
// µs per request of each object scenario, with the floor's beside it (plain
// Node, no auth, no database, measured in the same run). The verdict is on our
// CPU per request divided by the floor's of the same run: a run whose ratio is
// more than 10% above the accepted ratio says so loudly (and fails its check).
// Absolute µs are not stable from one machine to the next (a quick run here
// was +42% absolute while +17% against the floor beside it), the ratio much
// more. Without a floor figure on both sides, the absolute µs decide.
// `--accept-baseline` records this run's figures as the new baseline, to be
// committed with the change that explains them.
//
// CPU µs per request, not req/s: on a shared machine req/s follows the load
// generator and the neighbours, CPU per request much less.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Check, LoadFigures, Results } from './report.js';

export const BASELINE_TOLERANCE = 0.1;

export interface BaselineEntry {
  cpuUsPerRequest: number;
  /** The same-database floor's CPU µs per request in the accepted run (null when it was not measured). */
  floorCpuUsPerRequest: number | null;
  commit: string;
  date: string;
  mode: 'quick' | 'full';
}

export interface Baseline {
  about: string;
  scenarios: Record<string, BaselineEntry>;
}

/** Server CPU time per answered request (µs), or null without a CPU figure. */
export function cpuUsPerRequest(f: LoadFigures | null | undefined): number | null {
  return f?.serverCpuPct == null || !f.rps ? null : Math.round((f.serverCpuPct / 100 / f.rps) * 1e6 * 10) / 10;
}

const file = (root: string) => join(root, 'bench', 'baseline.json');

export function readBaseline(root: string): Baseline {
  if (!existsSync(file(root))) return { about: '', scenarios: {} };
  return JSON.parse(readFileSync(file(root), 'utf8')) as Baseline;
}

/** This run's CPU µs per request by scenario key (`backend: scenario`), with its same-database floor's. */
export function currentFigures(results: Results): Record<string, BaselineEntry> {
  const out: Record<string, BaselineEntry> = {};
  for (const o of results.objects) {
    const cpu = cpuUsPerRequest(o.figures);
    if (cpu === null) continue;
    const floor = o.backend === 'postgres' && o.pgFloor !== undefined ? o.pgFloor : o.floor;
    out[`${o.backend}: ${o.scenario}`] = {
      cpuUsPerRequest: cpu,
      floorCpuUsPerRequest: cpuUsPerRequest(floor),
      commit: results.code.commit,
      date: results.date,
      mode: results.mode,
    };
  }
  return out;
}

/** Our CPU per request over the floor's (same run), or null when the floor was not measured. */
const floorRatio = (e: BaselineEntry): number | null =>
  e.floorCpuUsPerRequest ? e.cpuUsPerRequest / e.floorCpuUsPerRequest : null;
const signed = (pct: number) => `${pct >= 0 ? '+' : ''}${pct}%`;

/** One check per scenario that has a baseline: CPU per request against the floor at most 10% above the accepted ratio. */
export function baselineChecks(results: Results, baseline: Baseline): { checks: Check[]; regressions: string[] } {
  const checks: Check[] = [];
  const regressions: string[] = [];
  for (const [key, now] of Object.entries(currentFigures(results))) {
    const base = baseline.scenarios[key];
    if (!base) continue;
    const absolute = Math.round((now.cpuUsPerRequest / base.cpuUsPerRequest - 1) * 100);
    const nowRatio = floorRatio(now);
    const baseRatio = floorRatio(base);
    const relative = nowRatio !== null && baseRatio !== null ? Math.round((nowRatio / baseRatio - 1) * 100) : null;
    // The verdict: against the floor when both runs measured it, else on absolute µs.
    const change = relative ?? absolute;
    const met =
      relative !== null
        ? nowRatio! <= baseRatio! * (1 + BASELINE_TOLERANCE)
        : now.cpuUsPerRequest <= base.cpuUsPerRequest * (1 + BASELINE_TOLERANCE);
    const detail =
      relative !== null
        ? `${now.cpuUsPerRequest} µs, ${nowRatio!.toFixed(2)}× the floor's ${now.floorCpuUsPerRequest} µs, vs ${baseRatio!.toFixed(2)}× then (${signed(relative)} against the floor; ${signed(absolute)} absolute)`
        : `${now.cpuUsPerRequest} vs ${base.cpuUsPerRequest} µs (${signed(absolute)} absolute; no floor to compare with)`;
    checks.push({
      name: `${key}: CPU per request against the floor vs accepted baseline (${base.commit})`,
      value: detail,
      target: `≤ +${BASELINE_TOLERANCE * 100}%`,
      met,
    });
    if (!met)
      regressions.push(
        `${key}: ${signed(change)} ${relative !== null ? 'against the floor' : 'absolute'} over the accepted baseline (commit ${base.commit}, ${base.date.slice(0, 10)}): ${detail}`,
      );
  }
  return { checks, regressions };
}

/** Writes this run's figures over the baseline's (scenarios not measured in this run keep theirs). */
export function acceptBaseline(root: string, results: Results): string[] {
  const baseline = readBaseline(root);
  const now = currentFigures(results);
  baseline.about =
    "Last accepted server CPU µs per request of each object scenario (npm run bench), with the same run's floor. A run whose CPU per request against its own floor is more than 10% above the accepted ratio is reported as a regression; `npm run bench -- --accept-baseline` (with the scenarios to keep) records a new one. Written by bench/lib/baseline.ts.";
  baseline.scenarios = { ...baseline.scenarios, ...now };
  writeFileSync(file(root), `${JSON.stringify(baseline, null, 2)}\n`);
  return Object.keys(now);
}

/** The loud part: a framed message on stderr that no one scrolls past. */
export function shout(regressions: string[]): void {
  if (!regressions.length) return;
  const bar = '!'.repeat(100);
  console.error(
    [
      '',
      bar,
      `!!! bench: CPU PER REQUEST (against the floor) REGRESSED by more than ${BASELINE_TOLERANCE * 100}% against bench/baseline.json:`,
      ...regressions.map((r) => `!!!   ${r}`),
      '!!! Profile it (npm run bench -- --quick --profile --only=profiles --profiles=objects) before it lands;',
      '!!! if the cost is intended, record it: npm run bench -- --accept-baseline (and commit bench/baseline.json).',
      bar,
      '',
    ].join('\n'),
  );
}
