// Turns the run's results into bench/results/latest.json and BENCHMARKS.md.
// BENCHMARKS.md is generated: edit this file, never the output.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FanoutResult } from './fanout.js';
import type { IsolationResults } from './isolation.js';
import type { KnowledgeResults } from './knowledge.js';
import type { IngestResult } from './ingest.js';
import type { ProfileSummary } from './profile.js';

export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server process's CPU during the measurement, percent of one core. */
  serverCpuPct: number | null;
}

export interface ObjectRow {
  backend: string;
  scenario: string;
  figures: LoadFigures | null;
  floor: LoadFigures | null;
  ratio: number | null;
  /** PostgreSQL rows: the same floor on PostgreSQL, and the ratio to it (the database's own cost left out). */
  pgFloor?: LoadFigures | null;
  pgRatio?: number | null;
  error?: string;
}

export interface Check {
  name: string;
  value: string;
  target: string;
  met: boolean;
}

export interface Results {
  date: string;
  /** bench/calls.ts per backend: 100 concurrent sandbox calls. */
  calls?: Array<{
    backend: string;
    calls: number;
    eventsExpected: number;
    eventsReceived: number;
    inOrder: number;
    p99: number | null;
    webhooksExpected: number;
    webhooksVerified: number;
    deliveriesPerSecond: number;
  }>;
  /** The commit measured, and how many files under src/ differed from it. */
  code: { commit: string; changedSrcFiles: number };
  mode: 'quick' | 'full';
  /** The scenarios of a run limited by --only (absent: every scenario of its mode). */
  only?: string[];
  durationSeconds: number;
  machine: { cores: number; cpu: string; node: string; os: string; memoryGb: number; loadAverageAtStart: number[] };
  settings: Record<string, unknown>;
  startup: {
    backend: string;
    startMs: number;
    idleRssMb: number | null;
    anonMb: number | null;
    fileMb: number | null;
  }[];
  objects: ObjectRow[];
  /** A one-user row may carry the streams floor measured right before it (bench/streams-floor-server.ts). */
  fanout: (FanoutResult & { backend: string; floor?: FanoutResult | null })[];
  /** Connector ingestion (POST /api/connect); absent in results written before it existed. */
  ingest: IngestResult[];
  profiles: Record<string, ProfileSummary>;
  knowledge: KnowledgeResults[];
  /** Issue 20: another user's GET /api/auth while one uploads the worst files; absent in results written before it existed. */
  isolation?: IsolationResults[];
  checks: Check[];
  failures: string[];
}

const fmt = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined ? '–' : n.toFixed(digits).replace(/\.0+$/, '');
const pct = (r: number | null) => (r === null ? '–' : `${Math.round(r * 100)}%`);

/** Server CPU time per answered request, in microseconds: less sensitive to a busy machine than req/s. */
const cpuPerRequest = (f: LoadFigures | null) =>
  f?.serverCpuPct == null || !f.rps ? '–' : String(Math.round((f.serverCpuPct / 100 / f.rps) * 1e6));

function pgFloorTable(rows: ObjectRow[]): string[] {
  const out = [
    '| scenario | req/s | CPU µs/req | PostgreSQL floor req/s | floor p99 ms | floor CPU µs/req | ratio to the PostgreSQL floor |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    if (r.backend !== 'postgres' || !r.figures) continue;
    out.push(
      `| ${r.scenario} | ${r.figures.rps} | ${cpuPerRequest(r.figures)} | ${r.pgFloor?.rps ?? '–'} | ${fmt(r.pgFloor?.p99)} | ${cpuPerRequest(r.pgFloor ?? null)} | ${pct(r.pgRatio ?? null)} |`,
    );
  }
  return out.length > 2 ? out : [];
}

function objectTable(rows: ObjectRow[]): string[] {
  const out = [
    '| backend | scenario | req/s | p50 ms | p99 ms | errors | server CPU % | CPU µs/req | floor req/s | floor p99 ms | floor CPU % | floor CPU µs/req | ratio to floor |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const f = r.figures;
    out.push(
      f
        ? `| ${r.backend} | ${r.scenario} | ${f.rps} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${f.errors} | ${fmt(f.serverCpuPct)} | ${cpuPerRequest(f)} | ${r.floor?.rps ?? '–'} | ${fmt(r.floor?.p99)} | ${fmt(r.floor?.serverCpuPct)} | ${cpuPerRequest(r.floor)} | ${pct(r.ratio)} |`
        : `| ${r.backend} | ${r.scenario} | failed: ${r.error ?? 'no result'} | | | | | | | | | | |`,
    );
  }
  return out;
}

function fanoutTable(rows: Results['fanout']): string[] {
  const out = [
    '| backend | subscribers | users | connected | events written (sent/s) | committed (log) | writer PUT p50 / p99 ms | deliveries received / expected | subscribers complete | delivery p50 ms | p99 ms | max ms | server RSS idle / connected / peak MB | server CPU % | client CPU % | note |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---|---|',
  ];
  const line = (backend: string, r: FanoutResult) => {
    const users = r.mode === 'shared' ? 'one user, many streams' : 'one user each';
    const note = [
      r.aborted,
      r.duplicates ? `${r.duplicates} repeated or out-of-order ids` : null,
      ...r.connectFailures,
      ...r.writeFailures,
    ]
      .filter(Boolean)
      .join('; ')
      .replace(/\|/g, '/')
      .slice(0, 200);
    out.push(
      `| ${backend} | ${r.subscribers} | ${users} | ${r.connected} | ${r.eventsWritten}${r.writesFailed ? ` + ${r.writesFailed} failed` : ''} (${r.achievedRate}) | ${r.eventsCommitted ?? '–'} | ${fmt(r.putP50)} / ${fmt(r.putP99)} | ${r.deliveriesReceived} / ${r.deliveriesExpected}${r.timedDeliveries !== undefined && r.timedDeliveries !== r.deliveriesReceived ? ` (${r.timedDeliveries} timed)` : ''} | ${r.subscribersComplete} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(r.rssIdleMb)} / ${fmt(r.rssConnectedMb)} / ${fmt(r.rssPeakMb)} | ${fmt(r.serverCpuPct)} | ${r.clientCpuPct.join(', ')} | ${note} |`,
    );
  };
  for (const r of rows) {
    if (r.floor) line(`streams floor (before ${r.backend})`, r.floor);
    line(r.backend, r);
  }
  return out;
}

/** One user's many streams against the streams floor measured right before them: p50 / p99 and their ratios. */
function streamsFloorTable(rows: Results['fanout']): string[] {
  const pairs = rows.filter((r) => r.floor);
  if (!pairs.length) return [];
  const ratio = (a: number | null, b: number | null | undefined) =>
    a !== null && b ? `${(Math.round((a / b) * 100) / 100).toFixed(2)}×` : '–';
  return [
    "| backend | streams | floor p50 / p99 ms | server p50 / p99 ms | ratio p50 / p99 | floor: all delivered | server CPU µs per delivery (user + system): floor / server | clients' CPU µs per delivery: floor / server | floor server CPU % | server CPU % | floor client CPU % | client CPU % | floor rounds (writes) |",
    '|---|---:|---|---|---|---|---|---|---:|---:|---|---|---|',
    ...pairs.map((r) => {
      const f = r.floor!;
      const all =
        f.subscribersComplete === f.subscribers && f.deliveriesReceived === f.deliveriesExpected
          ? 'yes'
          : `no (${f.deliveriesReceived} / ${f.deliveriesExpected})`;
      const rounds = f.floorStats ? `${f.floorStats.rounds} (${f.floorStats.writes})` : '–';
      const server = (c: FanoutResult['cpuPerDelivery']) =>
        c
          ? `${fmt(c.serverUserUs + c.serverSystemUs, 2)} (${fmt(c.serverUserUs, 2)} + ${fmt(c.serverSystemUs, 2)})`
          : '–';
      const clients = (c: FanoutResult['cpuPerDelivery']) => (c ? fmt(c.clientsUs, 2) : '–');
      return `| ${r.backend} | ${r.subscribers} | ${fmt(f.p50)} / ${fmt(f.p99)} | ${fmt(r.p50)} / ${fmt(r.p99)} | ${ratio(r.p50, f.p50)} / ${ratio(r.p99, f.p99)} | ${all} | ${server(f.cpuPerDelivery)} / ${server(r.cpuPerDelivery)} | ${clients(f.cpuPerDelivery)} / ${clients(r.cpuPerDelivery)} | ${fmt(f.serverCpuPct)} | ${fmt(r.serverCpuPct)} | ${f.clientCpuPct.join(', ')} | ${r.clientCpuPct.join(', ')} | ${rounds} |`;
    }),
  ];
}

function profileSection(name: string, p: ProfileSummary): string[] {
  return [
    `#### ${name} (${p.busySamples} busy samples, ${p.idlePct}% idle${p.windowMs !== undefined ? `; the ${(p.windowMs / 1000).toFixed(1)} s of measured load only` : ''})`,
    '',
    '| self % | where (package or src/ folder) |',
    '|---:|---|',
    ...p.byPackage.map((a) => `| ${a.selfPct} | ${a.area} |`),
    '',
    '| self % | function |',
    '|---:|---|',
    ...p.topFrames.map((f) => `| ${f.selfPct} | \`${f.frame}\` |`),
    '',
    '| total % (self + callees) | our function |',
    '|---:|---|',
    ...p.topOwnInclusive.map((f) => `| ${f.totalPct} | \`${f.frame}\` |`),
    '',
    ...(p.hooks?.length
      ? [
          '| total % (self + callees) | per-request hook (bench/lib/profile.ts HOOK_FILES) |',
          '|---:|---|',
          ...p.hooks.map((h) => `| ${h.totalPct} | ${h.hook} |`),
          '',
        ]
      : []),
  ];
}

/** The "Event fan-out" section (with the streams floor's comparison when measured); empty without fan-out rows. */
function fanoutSection(r: Results): string[] {
  if (!r.fanout.length) return [];
  const lines: string[] = [];
  lines.push(
    '## Event fan-out',
    '',
    'One writer creates objects at a steady rate (JWT, PUT /api/objects); subscribers hold GET /api/events/object_created open from separate processes. Latency is from just before the writer sends the PUT to the moment a subscriber has the whole event (the send time travels inside the ciphertext). The writer first writes at the same rate for the warm-up (fanoutWarmupSeconds, as the request scenarios\' warmupSeconds): those events must reach every subscriber too, but their deliveries are not timed. "Deliveries expected" and "subscribers complete" are checked against the event log: a subscriber is complete when its count and the sum of its ids equal its user\'s committed object_created events, so a write that timed out at the writer but committed is expected too. "one user each": the writer goes round-robin over the users, so each subscriber expects its own user\'s events; "one user, many streams": every subscriber expects every event.',
    '',
    ...fanoutTable(r.fanout),
    '',
  );
  const floor = streamsFloorTable(r.fanout);
  if (floor.length) {
    lines.push(
      "### One user's streams against the streams floor",
      '',
      "The streams floor (bench/streams-floor-server.ts) is what plain node:http does on this machine with the same connections from the same client processes and the same writer: no auth, no database, no events table; each PUT's object becomes the same ~2.3 KB object_created frame (the send time inside), and every round writes the frames pending since the last one to every socket as one chunk, one write per socket per round, rounds back to back, yielding to the event loop every 10 ms as the server does. It runs right before the real server's one-user row; the ratio is the real server's figure ÷ the floor's. On a shared machine the latencies follow the share of the cores each run got (two floor runs a minute apart differ by 2×): CPU µs per delivery compares the code.",
      '',
      ...floor,
      '',
    );
  }
  return lines;
}

const FANOUT_HEADING = '## Event fan-out';

/**
 * `--only=streams`: puts this run's "Event fan-out" section into BENCHMARKS.md in place of the previous one (up to the
 * next `## ` heading), leaving the rest of the file (and its Targets table) from the run that wrote it. The section
 * says which run it comes from. The results go to bench/results/streams-latest.json, not latest.json.
 */
export function spliceFanoutSection(root: string, results: Results): void {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'streams-latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const section = fanoutSection(results);
  if (!section.length) return;
  const m = results.machine;
  section.splice(
    2,
    0,
    `This section alone: \`--only=streams\` run of ${results.date} (${results.mode} mode, ${results.settings.fanoutSeconds} s of timed writes after ${results.settings.fanoutWarmupSeconds ?? 0} s of warm-up, ${results.durationSeconds} s) · code ${results.code.commit}${results.code.changedSrcFiles ? ` + ${results.code.changedSrcFiles} uncommitted files in src/` : ''} · load average at start ${m.loadAverageAtStart.join(' / ')}. The rest of this file (and the Targets table) is from the run named at the top.`,
    '',
  );
  const path = join(root, 'BENCHMARKS.md');
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(`${FANOUT_HEADING}\n`);
  const after = start >= 0 ? text.indexOf('\n## ', start + FANOUT_HEADING.length) : -1;
  const next =
    start < 0
      ? `${text.replace(/\n*$/, '\n\n')}${section.join('\n')}\n`
      : `${text.slice(0, start)}${section.join('\n')}${after >= 0 ? text.slice(after) : '\n'}`;
  writeFileSync(path, next);
}

export function renderMarkdown(r: Results): string {
  const m = r.machine;
  const lines = [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench`; do not edit by hand. The analysis lives in bench/ANALYSIS.md. -->',
    '',
    `Run: ${r.date} · mode **${r.mode}**${r.only ? ` · **only ${r.only.join(', ')}**` : ''} (${r.durationSeconds} s) · code ${r.code.commit}${r.code.changedSrcFiles ? ` + ${r.code.changedSrcFiles} uncommitted files in src/` : ''} · ${m.cores} cores (${m.cpu}) · Node ${m.node} · ${m.os} · ${m.memoryGb} GB RAM · load average at start ${m.loadAverageAtStart.join(' / ')}`,
    '',
    `Settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${JSON.stringify(v)}`)
      .join(' · ')}`,
    '',
    "The floor is bench/floor-server.ts (Fastify + better-sqlite3, no auth, validation, events or logging), measured right before each real scenario in the same run; the ratio is real req/s ÷ floor req/s. GET /api/auth is compared with the floor's point read. Latencies are autocannon's, 50 connections. autocannon runs in its own process on the same machine: a server whose CPU stays well under 100% is limited by the load generator (or the machine), not by itself, and CPU µs per request is then the fairer comparison.",
    '',
    '## Targets',
    '',
    '| check | measured | target | met |',
    '|---|---|---|---|',
    ...r.checks.map((c) => `| ${c.name} | ${c.value} | ${c.target} | ${c.met ? 'yes' : '**no**'} |`),
    '',
  ];
  if (r.startup.length) {
    lines.push(
      '## Start-up',
      '',
      '| backend | spawn → first answered request (ms) | idle RSS 1 s after start (MB) | of which anonymous (heap, buffers) | of which file-backed (node binary, native modules) |',
      '|---|---:|---:|---:|---:|',
      ...r.startup.map(
        (s) => `| ${s.backend} | ${s.startMs} | ${fmt(s.idleRssMb)} | ${fmt(s.anonMb)} | ${fmt(s.fileMb)} |`,
      ),
      '',
    );
  }
  if (r.objects.length) lines.push('## Objects and auth (50 connections)', '', ...objectTable(r.objects), '');
  const pgFloor = pgFloorTable(r.objects);
  if (pgFloor.length) {
    lines.push(
      '### PostgreSQL against a PostgreSQL floor',
      '',
      "The issue's floor is SQLite, so the ratios above for PostgreSQL include the database's own round trips and CPU (on the same two cores). Here the same floor server runs on PostgreSQL (`DATABASE_URL`, a pool of 20, one autocommitted insert per PUT, one point read per GET), measured right before the real scenario.",
      '',
      ...pgFloor,
      '',
    );
  }
  lines.push(...fanoutSection(r));
  if (r.knowledge?.length) {
    const k0 = r.knowledge[0];
    lines.push(
      '## Knowledge retrieval',
      '',
      `Corpus: the README files of the ${k0.corpus.documents} npm packages in node_modules (${fmt(k0.corpus.bytes / 1e6, 2)} MB), read at bench time. ${k0.questions} questions (bench/knowledge/questions.json), each with the package whose README answers it; a hit is that README among the 5 matches of POST /api/knowledge-bases/{id}/search (full-text only: no embeddings offline). MiniSearch indexes the same files in the same run. Search latency: ${k0.search.concurrency} concurrent clients over a base of ${k0.search.chunks} chunks (the corpus uploaded several times), questions in turn, measured from the bench process after a first search, which builds the base's in-memory index and is timed alone; ingestion: multipart upload to searchable, 25 files per request.`,
      '',
      '| backend | recall@5 | MRR@5 | MiniSearch recall@5 | MiniSearch MRR@5 | ingestion MB/s | chunks | first search (index build) ms | search req/s | p50 ms | p99 ms | errors |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...r.knowledge.map(
        (k) =>
          `| ${k.backend} | ${k.service.recallAt5} | ${k.service.mrrAt5} | ${k.minisearch.recallAt5} | ${k.minisearch.mrrAt5} | ${k.ingestion.mbPerSecond} | ${k.search.chunks} | ${k.search.firstSearchMs ?? '–'} | ${k.search.rps} | ${fmt(k.search.p50)} | ${fmt(k.search.p99)} | ${k.search.errors} |`,
      ),
      '',
      ...(k0.misses.length
        ? ['Questions the service missed (SQLite run):', '', ...k0.misses.map((m) => `- ${m}`), '']
        : []),
    );
  }
  if (r.isolation?.length) {
    lines.push(
      '## Uploads and crawls cannot stall the server',
      '',
      "One user keeps 3 uploads (one file each, in turn: ~2.3 MB of zip-bomb DOCX files with honest and lying directories, a PDF deflated twice that inflates to 200 MB, a 23 KB DOCX of 400,000 runs, 3.3 MB of HTML that took 58 s to parse on the event loop) and one crawl of two such pages in flight; another user reads GET /api/auth one request after another (5 ms apart), measured from the bench process. Every worst file is refused (413 past the inflation cap, 422 past the time or memory limit of its worker). Target: the other user's p99 < 100 ms.",
      '',
      '| backend | seconds | GET /api/auth requests | p50 ms | p99 ms | max ms | errors | before the attack: p50 / p99 ms | uploads | crawls | upload statuses |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...r.isolation.map(
        (i) =>
          `| ${i.backend} | ${i.seconds} | ${i.victim.requests} | ${fmt(i.victim.p50)} | ${fmt(i.victim.p99)} | ${fmt(i.victim.max)} | ${i.victim.errors} | ${fmt(i.baseline.p50)} / ${fmt(i.baseline.p99)} | ${i.attacker.uploads} | ${i.attacker.crawls} | ${Object.entries(
            i.attacker.statuses,
          )
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')} |`,
      ),
      '',
    );
  }
  if (r.ingest?.length) {
    lines.push(
      '## Connector ingestion',
      '',
      'A local connector (in the bench process) streams NDJSON records of about the object size as fast as they are read; one `POST /api/connect` (API key) ingests them into the contacts store: each record encrypted by the server and written in batches, one object_created event each. records/s runs from sending the POST to its 204. A subscriber on `GET /api/events/object_created` (filtered on the store) counts the events; "all events in" is when the last arrived, from the same start. PUT /api/objects is measured on the same server right after (50 connections, as above); the ratio is records/s ÷ PUT req/s.',
      '',
      '| backend | records | seconds | records/s | server CPU % | PUT /api/objects req/s | ratio | events delivered | all events in (ms) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...r.ingest.map(
        (i) =>
          `| ${i.backend} | ${i.written ?? '–'} of ${i.records} | ${fmt(i.seconds, 2)} | ${i.recordsPerSecond ?? '–'} | ${i.serverCpuPct ?? '–'} | ${i.put ? Math.round(i.put.rps) : '–'} | ${pct(i.ratio)} | ${i.eventsDelivered} | ${i.lastEventMs ?? '–'} |`,
      ),
      '',
    );
  }
  if (Object.keys(r.profiles).length) {
    lines.push(
      '## CPU profiles of the server (node --cpu-prof, self time; SQLite unless the heading names postgres)',
      '',
    );
    for (const [name, p] of Object.entries(r.profiles)) lines.push(...profileSection(name, p));
  }
  if (r.failures.length)
    lines.push('## Failures in this run', '', ...r.failures.map((f) => `- ${f.replace(/\n/g, ' ')}`), '');
  return `${lines.join('\n')}\n`;
}

export function writeResults(root: string, results: Results): void {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(root, 'BENCHMARKS.md'), renderMarkdown(results));
}
