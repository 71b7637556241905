// Summarizes a V8 .cpuprofile (node --cpu-prof): self time per function and
// per package, as shares of the busy (non-idle) samples.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface ProfileSummary {
  /** The span of the profile summarized (ms): the measured load only, when the run gave a window. */
  windowMs?: number;
  busySamples: number;
  idlePct: number;
  topFrames: { frame: string; selfPct: number }[];
  byPackage: { area: string; selfPct: number }[];
  /** Our own functions by total time (self plus callees): where a request's time goes. */
  topOwnInclusive: { frame: string; totalPct: number }[];
  /**
   * The per-request hooks by total time (self plus callees, synchronous stretches, not the rest of the request that a
   * callback-style hook runs inside its `done()`), as shares of the busy samples: every function of the file that
   * holds the hook counts (HOOK_FILES).
   */
  hooks?: { hook: string; totalPct: number }[];
}

/** Where each per-request hook lives (dist/ or node_modules/ paths, matched as suffixes of the frame's url). */
export const HOOK_FILES: { hook: string; files: string[] }[] = [
  {
    hook: 'security headers (helmet, or src/http/security)',
    files: ['helmet/index.cjs', '@fastify/helmet/index.js', 'src/http/security.js'],
  },
  { hook: 'CORS (@fastify/cors)', files: ['@fastify/cors/index.js', '@fastify/cors/vary.js'] },
  { hook: 'cookies (@fastify/cookie)', files: ['@fastify/cookie/plugin.js', '@fastify/cookie/cookie.js'] },
  { hook: 'NUL guard (src/http/input-guard)', files: ['src/http/input-guard.js'] },
  {
    hook: 'auth guard (src/http/auth + authenticator)',
    files: ['src/http/auth.js', 'src/modules/auth/authenticator.js'],
  },
  { hook: 'idempotency (src/http/idempotency)', files: ['src/http/idempotency.js'] },
  { hook: 'request id (genReqId, x-request-id hook in src/app)', files: ['src/app.js', 'src/lib/ids.js'] },
  {
    hook: 'logging + metrics (src/http/metrics onResponse, pino, prom-client)',
    files: ['src/http/metrics.js', 'pino/', 'prom-client/'],
  },
  { hook: 'body limits (src/http/body-limits)', files: ['src/http/body-limits.js'] },
  { hook: 'JSON body parser (src/http/json-body)', files: ['src/http/json-body.js', 'secure-json-parse/'] },
  { hook: 'validation (src/http/validation, ajv)', files: ['src/http/validation.js', 'ajv/'] },
];

/** What a frame belongs to: a package, our own code, Node itself, or V8 work. */
function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 13).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return 'node (core)';
  const src = url.indexOf('/dist/src/');
  if (src >= 0)
    return `src/${
      url
        .slice(src + 10)
        .split('/')
        .slice(0, -1)
        .join('/') || '.'
    }`;
  return url.includes('/bench/') ? 'bench' : 'other';
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 13);
  const src = url.indexOf('/dist/src/');
  return src >= 0 ? url.slice(src + 6) : url.replace(/^file:\/\//, '');
}

const frameName = ({ functionName, url, lineNumber }: ProfileNode['callFrame']) =>
  url ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}` : functionName || '(native)';

/** Total samples under each key (a function or a group), counting recursion once. */
function inclusive(
  nodes: ProfileNode[],
  keyOf: (frame: ProfileNode['callFrame']) => string | null,
): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const subtree = new Map<number, number>();
  const total = (n: ProfileNode): number => {
    let sum = n.hitCount ?? 0;
    for (const c of n.children ?? []) sum += total(byId.get(c)!);
    subtree.set(n.id, sum);
    return sum;
  };
  total(nodes[0]);
  const result = new Map<string, number>();
  const active = new Set<string>();
  const walk = (n: ProfileNode) => {
    const key = keyOf(n.callFrame);
    const entered = key !== null && !active.has(key);
    if (entered) {
      result.set(key!, (result.get(key!) ?? 0) + subtree.get(n.id)!);
      active.add(key!);
    }
    for (const c of n.children ?? []) walk(byId.get(c)!);
    if (entered) active.delete(key!);
  };
  walk(nodes[0]);
  return result;
}

/**
 * Samples per hook: each sample goes to the nearest enclosing frame of a hook's file, unless Fastify's own request
 * pipeline (hooks.js, route.js, handleRequest.js …) lies between: a callback-style hook calls `done()`, which runs the
 * next hooks and the handler inside it, and those are not the hook's cost.
 */
const PIPELINE =
  /node_modules\/fastify\/lib\/(hooks|route|handle-request|handleRequest|wrap-thenable|wrapThenable|validation|content-type-parser|contentTypeParser)\.js$/;
function byHook(nodes: ProfileNode[]): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const result = new Map<string, number>();
  const walk = (n: ProfileNode, label: string | null) => {
    const key = hookKey(n.callFrame);
    const here = key ?? (PIPELINE.test(n.callFrame.url) ? null : label);
    if (here && n.hitCount) result.set(here, (result.get(here) ?? 0) + n.hitCount);
    for (const c of n.children ?? []) walk(byId.get(c)!, here);
  };
  walk(nodes[0], null);
  return result;
}

const ownKey = (frame: ProfileNode['callFrame']) => (frame.url.includes('/dist/src/') ? frameName(frame) : null);
const hookKey = (frame: ProfileNode['callFrame']) => {
  const url = frame.url;
  if (!url) return null;
  for (const { hook, files } of HOOK_FILES)
    for (const f of files)
      if (
        f.endsWith('/')
          ? url.includes(`node_modules/${f}`)
          : url.endsWith(f.startsWith('src/') ? `/dist/${f}` : `node_modules/${f}`)
      )
        return hook;
  return null;
};

/**
 * Summarizes a profile; with `window` (CLOCK_MONOTONIC µs, as process.hrtime and V8's profile timestamps are), only
 * the samples taken inside it count, so start-up and warm-up stay out of the figures.
 */
export function summarizeProfile(file: string, top = 15, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
    samples?: number[];
    timeDeltas?: number[];
  };
  let windowMs: number | undefined;
  if (window && profile.samples && profile.timeDeltas) {
    // hitCount from the samples inside the window only.
    const hits = new Map<number, number>();
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      t += profile.timeDeltas[i];
      if (t < window.fromUs || t > window.toUs) continue;
      hits.set(profile.samples[i], (hits.get(profile.samples[i]) ?? 0) + 1);
    }
    for (const node of profile.nodes) node.hitCount = hits.get(node.id) ?? 0;
    windowMs = Math.round((Math.min(window.toUs, profile.endTime) - Math.max(window.fromUs, profile.startTime)) / 1000);
  }
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits) continue;
    const { functionName, url } = node.callFrame;
    if (functionName === '(idle)') {
      idle += hits;
      continue;
    }
    busy += hits;
    const frame = frameName(node.callFrame);
    frames.set(frame, (frames.get(frame) ?? 0) + hits);
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + hits);
  }
  const pct = (n: number) => Math.round((n / Math.max(1, busy)) * 1000) / 10;
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  return {
    ...(windowMs !== undefined ? { windowMs } : {}),
    busySamples: busy,
    idlePct: Math.round((idle / Math.max(1, idle + busy)) * 1000) / 10,
    topFrames: sorted(frames).map(([frame, n]) => ({ frame, selfPct: pct(n) })),
    byPackage: sorted(areas).map(([area, n]) => ({ area, selfPct: pct(n) })),
    topOwnInclusive: sorted(inclusive(profile.nodes, ownKey)).map(([frame, n]) => ({ frame, totalPct: pct(n) })),
    hooks: [...byHook(profile.nodes).entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([hook, n]) => ({ hook, totalPct: pct(n) })),
  };
}

/**
 * The main thread's .cpuprofile of the newest server in dir. Node names them CPU.<date>.<time>.<pid>.<thread>.<n>:
 * worker threads (the VAD, the checkpointer) write theirs beside it, and a directory used before holds older runs'.
 */
export function findProfile(dir: string): string {
  const mains = readdirSync(dir)
    .filter((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    .map((f) => ({ path: join(dir, f), mtimeMs: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
  if (!mains[0]) throw new Error(`no main-thread .cpuprofile written in ${dir}`);
  return mains[0].path;
}
