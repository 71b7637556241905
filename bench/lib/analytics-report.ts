// The "Analytics" section of BENCHMARKS.md, from bench/results/analytics-<backend>.json
// (bench/analytics.ts, which writes it after each run). It sits between
// markers, so a run of the analytics bench replaces only it; each backend's
// figures carry their date and the machine's load.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const START = '<!-- analytics: generated from bench/results/analytics-*.json by bench/lib/analytics-report.ts -->';
const END = '<!-- /analytics -->';

interface AnalyticsFile {
  backend: string;
  quick: boolean;
  at: string;
  /** load: at the end; loadAtStart: as the timed requests began (after the seed and the warm-up). */
  machine: { cpus: number; load: number[]; loadAtStart?: number[] };
  calls: number;
  otherAccountCalls: number;
  days: number;
  seedSeconds: number;
  rows: Array<{ grouping: string; requests: number; p50Ms: number | null; p99Ms: number | null; maxMs: number | null }>;
  checks: Array<{ name: string; value: unknown; target: string; met: boolean }>;
  failures: string[];
}

const v = (x: number | null | undefined) => (x === null || x === undefined ? '–' : String(x));

export function renderAnalyticsSection(root: string): string[] {
  const files = ['sqlite', 'postgres']
    .map((b) => join(root, 'bench', 'results', `analytics-${b}.json`))
    .filter(existsSync);
  if (!files.length) return [];
  const lines = [START, '## Analytics (bench/analytics.ts, `npm run bench -- --only=analytics`)', ''];
  lines.push(
    'GET /api/analytics/calls on the real server (`node dist/server.js`) over 90 days of one account with 100,000 calls,',
    "another account's 20,000 beside them, rows written as the calls and analysis services leave them. Each grouping",
    '(day in Europe/Berlin, agent, campaign, outcome, direction), and the day view filtered by one agent or one campaign, is',
    'asked for one request after another; the floor is the same request over a day without calls (auth, route, zone',
    'offsets, an empty read), asked as often in the same run. Target: p99 < 100 ms for every grouping. What each',
    'database does: docs/decisions/analysis.md ("One read of the range, no sort").',
    '',
  );
  for (const file of files) {
    const r = JSON.parse(readFileSync(file, 'utf8')) as AnalyticsFile;
    const load = r.machine.loadAtStart
      ? `load average ${r.machine.loadAtStart.join(' / ')} as the timed requests began, ${r.machine.load.join(' / ')} at the end`
      : `load average ${r.machine.load.join(' / ')} at the end`;
    lines.push(
      `### ${r.backend} — ${r.at.slice(0, 16).replace('T', ' ')} UTC, ${r.quick ? 'quick' : 'full'} mode, ${r.machine.cpus} cores, ${load}`,
      '',
      `${r.calls.toLocaleString('en-US')} calls over ${r.days} days (+${r.otherAccountCalls.toLocaleString('en-US')} of another account), seeded in ${r.seedSeconds} s.`,
      '',
      '| grouping | requests | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|',
    );
    for (const row of r.rows)
      lines.push(`| ${row.grouping} | ${row.requests} | ${v(row.p50Ms)} | ${v(row.p99Ms)} | ${v(row.maxMs)} |`);
    lines.push('');
    for (const c of r.checks)
      lines.push(`- ${c.met ? 'met' : 'MISSED'}: ${c.name}: ${String(c.value)} (target ${c.target})`);
    for (const f of r.failures) lines.push(`- failure: ${f}`);
    lines.push('');
  }
  lines.push(END);
  return lines;
}

/** Replaces the section between its markers, or puts it before the voice agent's (or at the end) the first time. */
export function spliceAnalyticsSection(root: string): void {
  const path = join(root, 'BENCHMARKS.md');
  if (!existsSync(path)) return;
  const section = renderAnalyticsSection(root);
  if (!section.length) return;
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  let next: string;
  if (start !== -1 && end > start) next = text.slice(0, start) + section.join('\n') + text.slice(end + END.length);
  else {
    const voice = text.indexOf('<!-- voice-agent:');
    next =
      voice !== -1
        ? `${text.slice(0, voice)}${section.join('\n')}\n\n${text.slice(voice)}`
        : `${text.trimEnd()}\n\n${section.join('\n')}\n`;
  }
  writeFileSync(path, next);
}
