// Starts the real server exactly as in production (node dist/server.js) or
// the floor server, and measures the time from spawn to the first answered
// GET /api/health.
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, sleep, spawnNode, stop } from './proc.js';

export interface RunningServer {
  name: string;
  pid: number;
  base: string;
  /** Milliseconds from spawn to the first 200 from /api/health. */
  startMs: number;
  /** Why the process ended before stop() was called (exit code and last output), or null while it runs. */
  crash(): string | null;
  stop(): Promise<void>;
}

export interface ServerOptions {
  dataDir: string;
  /** Extra environment (secrets, DATABASE_URL, stream caps). */
  env?: Record<string, string>;
  /** Directory for a V8 CPU profile written when the server exits. */
  cpuProfDir?: string;
  timeoutMs?: number;
  /** Listen on this port (when the environment must name it, as PUBLIC_URL does); a free one otherwise. */
  port?: number;
  /**
   * Another build's entry (bench/ab.ts: an older build beside this one). By default dist/server.js, what `npm start`
   * runs; under a CPU profile, the same build unbundled (dist/src/main.js), so each frame names its own file and the
   * profile tables attribute it (in the bundle every frame of ours is dist/server.js).
   */
  entry?: string;
  /** Node flags after `npm start`'s own, which they override (bench/ab.ts --after-flags: an A/B of runtime flags). */
  nodeFlags?: string[];
}

function healthOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/api/health', agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function launch(name: string, args: string[], options: ServerOptions): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: options.dataDir,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  // BENCH_SERVER_FLAGS: more node flags for the servers, e.g. --perf-basic-prof so that a system-wide `perf record`
  // names the JIT's functions (how the fan-out's kernel and V8 costs were told apart: bench/ANALYSIS.md).
  const extraFlags = process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const profArgs = [
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`] : []),
    ...extraFlags,
  ];
  const started = performance.now();
  const child = spawnNode([...profArgs, ...args], env);
  const deadline = started + (options.timeoutMs ?? 20_000);
  while (!(await healthOnce(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${child.outputTail()}`);
    if (performance.now() > deadline) {
      await stop(child);
      throw new Error(
        `${name} did not answer /api/health within ${options.timeoutMs ?? 20_000} ms: ${child.outputTail()}`,
      );
    }
    await sleep(5);
  }
  const startMs = Math.round(performance.now() - started);
  let stopping = false;
  return {
    name,
    pid: child.pid!,
    base: `http://127.0.0.1:${port}`,
    startMs,
    crash: () =>
      !stopping && (child.exitCode !== null || child.signalCode !== null)
        ? `${name} exited (${child.exitCode ?? child.signalCode}) during the run: ${child.outputTail().slice(-1500)}`
        : null,
    stop: () => {
      stopping = true;
      return stop(child, 15_000);
    },
  };
}

/** The node flags of `npm start` (package.json), so the bench runs the server exactly as production does. */
function productionNodeFlags(): string[] {
  const start: string = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')).scripts.start;
  const match = /\bnode\s+((?:--\S+\s+)*)dist\/server\.js/.exec(start);
  return match ? match[1].trim().split(/\s+/).filter(Boolean) : [];
}

export const startRealServer = (options: ServerOptions) =>
  launch(
    'server',
    [
      ...productionNodeFlags(),
      ...(options.nodeFlags ?? []),
      options.entry ?? (options.cpuProfDir ? 'dist/src/main.js' : 'dist/server.js'),
    ],
    options,
  );
export const startFloorServer = (options: ServerOptions) =>
  launch('floor', ['--import', 'tsx', 'bench/floor-server.ts'], options);
/** bench/streams-floor-server.ts: one user's many event streams with plain node:http, no auth, no database. */
export const startStreamsFloorServer = (options: ServerOptions) =>
  launch('streams floor', ['--import', 'tsx', 'bench/streams-floor-server.ts'], options);
