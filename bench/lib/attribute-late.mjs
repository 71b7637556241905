// node bench/lib/attribute-late.mjs <server .cpuprofile> <windows.json: [[fromUs, toUs], …]> <summary.json of bench/voice.ts --profile>
// What the server's main thread did while something was overdue: the profile's samples inside the given windows
// (late timers from late-timers.mjs, or late frames), by area, and the time it was not running at all (gaps
// between samples beyond two intervals: descheduled). Only windows inside the measured level count.
import { readFileSync } from 'node:fs';
const [file, lagFile, summaryFile] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const lags = JSON.parse(readFileSync(lagFile, 'utf8'));
const win = JSON.parse(readFileSync(summaryFile, 'utf8')).window;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const cls = new Map();
function classOf(id) {
  if (cls.has(id)) return cls.get(id);
  const chain = [];
  for (let a = id; a !== undefined; a = parent.get(a)) chain.push(byId.get(a).callFrame);
  const leaf = chain[0];
  const has = (s) => chain.some((f) => f.url.includes(s) || f.functionName === s);
  let c;
  if (leaf.functionName === '(idle)') c = 'idle';
  else if (leaf.functionName === '(garbage collector)') c = 'gc';
  else if (has('onnxruntime')) c = 'vad onnx run';
  else if (has('kysely') || has('better-sqlite'))
    c =
      'db (kysely) ' +
      (chain.find((f) => f.url.includes('/dist/src/') && !f.url.includes('/db/'))?.url.split('/dist/src/')[1] ?? '');
  else if (has('/speech-to-text/deepgram')) c = 'deepgram socket';
  else if (has('/sink.js')) c = 'sink';
  else if (has('parseTwilioMessage') || has('/transport.js')) c = 'twilio transport';
  else if (has('/modules/voice/'))
    c = `voice ${chain.find((f) => f.url.includes('/modules/voice/')).url.split('/modules/voice/')[1]}`;
  else if (has('/dist/src/')) c = `src ${chain.find((f) => f.url.includes('/dist/src/')).url.split('/dist/src/')[1]}`;
  else if (has('undici')) c = 'undici';
  else if (has('/ws/')) c = 'ws';
  else c = `other:${leaf.functionName || '?'}`;
  cls.set(id, c);
  return c;
}
const inWin = lags.filter(([a, b]) => a >= win.fromUs && b <= win.toUs);
let totalLate = 0;
for (const [a, b] of inWin) totalLate += b - a;
console.log(
  'late ticks in window',
  inWin.length,
  'of',
  lags.length,
  'late ms',
  Math.round(totalLate / 1000),
  'window ms',
  Math.round((win.toUs - win.fromUs) / 1000),
);
const q = inWin.map(([a, b]) => (b - a) / 1000).sort((x, y) => x - y);
console.log('lateness ms p50', q[q.length >> 1]?.toFixed(1), 'max', q.at(-1)?.toFixed(1));
// per sample attribution, only inside late intervals; sample i covers (t_{i-1}, t_i]
const acc = {};
let gap = 0,
  covered = 0;
let t = p.startTime,
  prev = t,
  k = 0;
inWin.sort((x, y) => x[0] - y[0]);
for (let i = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i];
  while (k < inWin.length && inWin[k][1] < prev) k++;
  if (k >= inWin.length) break;
  const [a, b] = inWin[k];
  const lo = Math.max(a, prev),
    hi = Math.min(b, t);
  if (hi > lo) {
    const d = hi - lo;
    covered += d;
    const g = Math.max(0, t - prev - 2000); // beyond 2 intervals: not running
    const gPart = Math.min(d, g);
    gap += gPart;
    const c = classOf(p.samples[i]);
    acc[c] = (acc[c] ?? 0) + (d - gPart);
  }
  prev = t;
}
console.log('covered ms', Math.round(covered / 1000), 'not running (gaps) ms', Math.round(gap / 1000));
for (const [c, v] of Object.entries(acc)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 22))
  console.log(`${((v / covered) * 100).toFixed(1).padStart(5)}%`, c);
