// The regression guard: bench/baseline.json keeps the last accepted server CPU
// µs per request of each object scenario. A run more than 10% above it says so
// loudly (and fails its check); `--accept-baseline` records this run's figures
// as the new baseline, to be committed with the change that explains them.
//
// CPU µs per request, not req/s: on a shared machine req/s follows the load
// generator and the neighbours, CPU per request much less. The floor's own CPU
// per request is kept beside it, so a reader can tell a slower machine (both
// higher) from a costlier server (only ours higher).
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
    out[`${o.backend}: ${o.scenario}`] = { cpuUsPerRequest: cpu, floorCpuUsPerRequest: cpuUsPerRequest(floor), commit: results.code.commit, date: results.date, mode: results.mode };
  }
  return out;
}

/** One check per scenario that has a baseline: CPU µs per request at most 10% above it. */
export function baselineChecks(results: Results, baseline: Baseline): { checks: Check[]; regressions: string[] } {
  const checks: Check[] = [];
  const regressions: string[] = [];
  for (const [key, now] of Object.entries(currentFigures(results))) {
    const base = baseline.scenarios[key];
    if (!base) continue;
    const limit = base.cpuUsPerRequest * (1 + BASELINE_TOLERANCE);
    const change = Math.round((now.cpuUsPerRequest / base.cpuUsPerRequest - 1) * 100);
    const floorNote = base.floorCpuUsPerRequest && now.floorCpuUsPerRequest ? `; floor ${now.floorCpuUsPerRequest} vs ${base.floorCpuUsPerRequest} µs then${relativeNote(now, base)}` : '';
    checks.push({ name: `${key}: CPU µs/request vs accepted baseline (${base.commit})`, value: `${now.cpuUsPerRequest} vs ${base.cpuUsPerRequest} (${change >= 0 ? '+' : ''}${change}%${floorNote})`, target: `≤ +${BASELINE_TOLERANCE * 100}%`, met: now.cpuUsPerRequest <= limit });
    if (now.cpuUsPerRequest > limit) regressions.push(`${key}: ${now.cpuUsPerRequest} CPU µs per request, ${change}% above the accepted ${base.cpuUsPerRequest} µs (commit ${base.commit}, ${base.date.slice(0, 10)})${floorNote}`);
  }
  return { checks, regressions };
}

/**
 * The same comparison with each figure divided by its floor's: a machine slower or faster as a whole moves both,
 * a costlier server only ours. Shown beside the verdict (which stays on CPU µs, as accepted) so a reader can tell
 * the two apart; a new machine makes every µs figure move at once (27 Nov 2026: -35 to -53% on a faster one).
 */
function relativeNote(now: BaselineEntry, base: BaselineEntry): string {
  const change = Math.round(((now.cpuUsPerRequest / now.floorCpuUsPerRequest!) / (base.cpuUsPerRequest / base.floorCpuUsPerRequest!) - 1) * 100);
  const verdict = now.cpuUsPerRequest > base.cpuUsPerRequest * (1 + BASELINE_TOLERANCE) && change <= BASELINE_TOLERANCE * 100 ? ': the floor moved as much, so the machine more likely than the server' : '';
  return `, ${change >= 0 ? '+' : ''}${change}% against the floor${verdict}`;
}

/** Writes this run's figures over the baseline's (scenarios not measured in this run keep theirs). */
export function acceptBaseline(root: string, results: Results): string[] {
  const baseline = readBaseline(root);
  const now = currentFigures(results);
  baseline.about =
    'Last accepted server CPU µs per request of each object scenario (npm run bench). A run more than 10% above it is reported as a regression; `npm run bench -- --accept-baseline` (with the scenarios to keep) records a new one. Written by bench/lib/baseline.ts.';
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
      `!!! bench: CPU PER REQUEST REGRESSED by more than ${BASELINE_TOLERANCE * 100}% against bench/baseline.json:`,
      ...regressions.map((r) => `!!!   ${r}`),
      '!!! Profile it (npm run bench -- --quick --profile --only=profiles --profiles=objects) before it lands;',
      '!!! if the cost is intended, record it: npm run bench -- --accept-baseline (and commit bench/baseline.json).',
      bar,
      '',
    ].join('\n'),
  );
}
