// Preloaded into bench/campaigns.ts's server processes (node --import tsx
// --import bench/lib/dialer-cpu.ts), never into a real server: it measures the
// campaign dialer's own CPU apart from carrying the calls it placed. The
// dialer's rounds (claims, pacing, business hours, the sweep), each placing of
// a call (up to CallService.start returning) and each decision on a call's end
// (callFinished) run in an async scope of their own; async_hooks counts the CPU
// of every callback that runs in such a scope, or in one created from it,
// while that scope is still under way. A placed call's later life (media
// timers, status reports, events, webhooks, charging) was created inside a
// placing but runs after it returned, so it is not counted. Not counted either:
// the PostgreSQL driver parsing answers (it runs in its socket's callbacks).
// The totals are written as JSON { cpuUs, byPart: { round, place, callFinished },
// counts: { round, place, callFinished } } (counts: how many of each ran, metered or not)
// to BENCH_DIALER_CPU_FILE every 500 ms. The hooks slow the whole process
// (every promise is tracked), so they are enabled only on SIGUSR2, which the
// bench sends once the figures measured without them are taken.
import { AsyncResource, createHook, executionAsyncId } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import { CampaignDialer } from '../../src/modules/campaigns/dialer.js';

export type Part = 'round' | 'place' | 'callFinished';
type Scope = { live: boolean; part: Part };
const scopes = new Map<number, Scope>();
/** Per running callback (a stack: callbacks nest): its start (CPU reading, part), if it counts and no outer one does. */
const frames: Array<{ at: number; part: Part } | null> = [];
let counting = false;
let cpuUs = 0;
const byPart: Record<Part, number> = { round: 0, place: 0, callFinished: 0 };
const counts: Record<Part, number> = { round: 0, place: 0, callFinished: 0 };
const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const hook = createHook({
  init(asyncId) {
    const scope = scopes.get(executionAsyncId());
    if (scope?.live) scopes.set(asyncId, scope);
  },
  before(asyncId) {
    const scope = counting ? undefined : scopes.get(asyncId);
    if (scope?.live) counting = true;
    frames.push(scope?.live ? { at: cpuNow(), part: scope.part } : null);
  },
  after() {
    const started = frames.pop();
    if (!started) return;
    const used = cpuNow() - started.at;
    cpuUs += used;
    byPart[started.part] += used;
    counting = false;
  },
  destroy(asyncId) {
    scopes.delete(asyncId);
  },
});
/** Switches the counting on (the bench sends SIGUSR2 for it). */
export const enableMeter = () => void hook.enable();
process.on('SIGUSR2', enableMeter);

/** What has been counted so far (µs). */
export const meterReading = () => ({ cpuUs, byPart: { ...byPart }, counts: { ...counts } });

/** Runs fn in a scope of its own that counts until the promise it returns settles. */
export function scoped<T>(part: Part, fn: () => Promise<T>): Promise<T> {
  counts[part]++;
  const scope: Scope = { live: true, part };
  const resource = new AsyncResource('BenchCampaignDialer');
  scopes.set(resource.asyncId(), scope);
  return Promise.resolve(resource.runInAsyncScope(fn)).finally(() => {
    scope.live = false;
    resource.emitDestroy();
  });
}

const proto = CampaignDialer.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
for (const name of ['round', 'place', 'callFinished'] as const) {
  const original = proto[name];
  if (typeof original !== 'function') throw new Error(`bench/lib/dialer-cpu: CampaignDialer has no ${name}()`);
  proto[name] = function (this: unknown, ...args: unknown[]) {
    return scoped(name, () => original.apply(this, args));
  };
}

const file = process.env.BENCH_DIALER_CPU_FILE;
if (file) setInterval(() => writeFileSync(file, JSON.stringify(meterReading())), 500).unref();
