// Child processes of the bench: every one is tracked so that the run stops
// them all at the end, on failure and on Ctrl-C. Also: free ports, RSS.
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
const children = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Runs a TypeScript file under tsx in its own process, with an IPC channel. */
export function forkTs(
  file: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
  nodeFlags: string[] = [],
): ChildProcess {
  return track(
    fork(join(ROOT, file), args, {
      cwd: ROOT,
      env,
      execArgv: [...nodeFlags, '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
}

/** Spawns a plain process (the built server); the tail of its output (logs at warn and above, crashes) is kept for reports. */
export function spawnNode(args: string[], env: NodeJS.ProcessEnv): ChildProcess & { outputTail: () => string } {
  const child = track(spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-3000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return Object.assign(child, { outputTail: () => output });
}

/** SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

/** Last-resort clean-up: kills every child still running, by its own pid. */
export function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Sends one message and waits for the child's answer of the given type. */
export function request<T>(child: ChildProcess, message: object, replyType: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no "${replyType}" from child within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (msg: { type: string; error?: string }) => {
      if (msg.type === 'error') finish(new Error(msg.error));
      else if (msg.type === replyType) finish(null, msg as T);
    };
    const onExit = (code: number | null) => finish(new Error(`child exited (${code}) before answering "${replyType}"`));
    function finish(err: Error | null, value?: T) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(value!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(message);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resident set size of a process in MB (VmRSS from /proc); null once it is gone. */
export function rssMb(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/** RSS split into anonymous memory (heaps, buffers) and file-backed pages (the node binary, native modules), in MB. */
export function rssParts(pid: number): { anonMb: number; fileMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
    return {
      anonMb: Math.round(kb('RssAnon') / 102.4) / 10,
      fileMb: Math.round((kb('RssFile') + kb('RssShmem')) / 102.4) / 10,
    };
  } catch {
    return null;
  }
}

/** Samples a process's RSS every intervalMs; peak() since the last reset(). */
export function watchRss(pid: number, intervalMs = 200) {
  let peak = 0;
  const sample = () => {
    const mb = rssMb(pid);
    if (mb !== null && mb > peak) peak = mb;
  };
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    peak: () => (sample(), peak),
    reset: () => (peak = 0),
    close: () => clearInterval(timer),
  };
}

let ticksPerSecond = 0;

/** CPU time (user + system) a process has used, in seconds; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    ticksPerSecond ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** CPU time a process has used, user and system apart, in seconds; null once it is gone. */
export function cpuParts(pid: number): { user: number; system: number } | null {
  try {
    ticksPerSecond ||= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / ticksPerSecond, system: Number(fields[12]) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** Measures a process's CPU use (percent of one core) while `work` runs. */
export async function withCpu<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; cpuPct: number | null }> {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const value = await work();
  const cpu1 = cpuSeconds(pid);
  const cpuPct =
    cpu0 === null || cpu1 === null ? null : Math.round(((cpu1 - cpu0) / ((performance.now() - t0) / 1000)) * 100);
  return { value, cpuPct };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
