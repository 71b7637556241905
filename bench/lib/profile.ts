// Summarizes a V8 .cpuprofile (node --cpu-prof): self time per function and
// per package, as shares of the busy (non-idle) samples.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface ProfileSummary {
  busySamples: number;
  idlePct: number;
  topFrames: { frame: string; selfPct: number }[];
  byPackage: { area: string; selfPct: number }[];
  /** Our own functions by total time (self plus callees): where a request's time goes. */
  topOwnInclusive: { frame: string; totalPct: number }[];
}

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
  if (src >= 0) return `src/${url.slice(src + 10).split('/').slice(0, -1).join('/') || '.'}`;
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

/** Total samples under each of our own (src/) functions, counting recursion once. */
function ownInclusive(nodes: ProfileNode[]): Map<string, number> {
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
    const own = n.callFrame.url.includes('/dist/src/');
    const key = frameName(n.callFrame);
    const entered = own && !active.has(key);
    if (entered) {
      result.set(key, (result.get(key) ?? 0) + subtree.get(n.id)!);
      active.add(key);
    }
    for (const c of n.children ?? []) walk(byId.get(c)!);
    if (entered) active.delete(key);
  };
  walk(nodes[0]);
  return result;
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[] };
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
    busySamples: busy,
    idlePct: Math.round((idle / Math.max(1, idle + busy)) * 1000) / 10,
    topFrames: sorted(frames).map(([frame, n]) => ({ frame, selfPct: pct(n) })),
    byPackage: sorted(areas).map(([area, n]) => ({ area, selfPct: pct(n) })),
    topOwnInclusive: sorted(ownInclusive(profile.nodes)).map(([frame, n]) => ({ frame, totalPct: pct(n) })),
  };
}

/** The one .cpuprofile a server left in dir. */
export function findProfile(dir: string): string {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile written in ${dir}`);
  return join(dir, file);
}
