// npx tsx bench/event-detail.ts /path.server-5000 [/path.floor-5000 …]
// Summarizes what the SSE clients of a fan-out run wrote with BENCH_EVENT_DETAIL=/path (bench/workers/sse-clients.ts):
// per half second of the writer's stamps, the deliveries' mean latency and the share over 100 ms, and how much of
// that share belongs to events that reached most streams late (the server's rounds) rather than to streams that
// read late (a client). Example:
//   BENCH_EVENT_DETAIL=/tmp/d/run npm run bench -- --no-build --only=streams --backend=sqlite
//   npx tsx bench/event-detail.ts /tmp/d/run.floor-5000 /tmp/d/run.server-5000
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';

type Row = [n: number, sumUs: number, maxUs: number, over100: number, stampNs: number];

function summarize(prefix: string): string {
  const merged = new Map<number, Row>();
  const files = readdirSync(dirname(prefix)).filter((f) => f.startsWith(`${basename(prefix)}.`));
  if (files.length === 0) return `${prefix}: no files`;
  for (const file of files) {
    for (const [id, [n, sum, max, over, stamp]] of JSON.parse(readFileSync(`${dirname(prefix)}/${file}`, 'utf8')) as [
      number,
      Row,
    ][]) {
      const m = merged.get(id);
      if (!m) merged.set(id, [n, sum, max, over, stamp]);
      else merged.set(id, [m[0] + n, m[1] + sum, Math.max(m[2], max), m[3] + over, Math.min(m[4], stamp)]);
    }
  }
  const rows = [...merged.values()].sort((a, b) => a[4] - b[4]);
  const t0 = rows[0][4];
  let total = 0;
  let over = 0;
  let overInLateEvents = 0;
  const buckets = new Map<number, [n: number, sumUs: number, over: number]>();
  for (const [n, sum, , o, stamp] of rows) {
    total += n;
    over += o;
    if (o / n > 0.5) overInLateEvents += o;
    const b = Math.floor((stamp - t0) / 5e8);
    const x = buckets.get(b) ?? [0, 0, 0];
    buckets.set(b, [x[0] + n, x[1] + sum, x[2] + o]);
  }
  const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)}%`;
  return [
    `${basename(prefix)}: ${rows.length} events, ${total} deliveries, ${pct(over, total)} over 100 ms (of those, ${pct(overInLateEvents, Math.max(over, 1))} in events that reached most streams late)`,
    `  per 0.5 s (mean ms / over 100 ms): ${[...buckets].map(([b, [n, s, o]]) => `${(b / 2).toFixed(1)}s ${(s / n / 1000).toFixed(0)}/${pct(o, n)}`).join('  ')}`,
  ].join('\n');
}

for (const prefix of process.argv.slice(2)) console.log(summarize(prefix));
