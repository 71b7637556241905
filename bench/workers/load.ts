// Load generator process: for each job, runs one autocannon measurement
// (after a warm-up that is not counted) and sends the figures back. Kept out
// of the server's and the orchestrator's event loop on purpose.
import autocannon, { type RequestSpec } from 'autocannon';

export interface LoadJob {
  type: 'run';
  url: string;
  method: 'GET' | 'PUT';
  headers: Record<string, string>;
  body?: string;
  /** Paths to cycle through (GET of existing objects); otherwise the url's path. */
  paths?: string[];
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LoadResult {
  type: 'result';
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

function options(job: LoadJob, seconds: number) {
  let next = 0;
  const paths = job.paths;
  const requests: RequestSpec[] | undefined = paths
    ? [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }]
    : undefined;
  return {
    url: job.url,
    method: job.method,
    headers: job.headers,
    body: job.body,
    connections: job.connections,
    duration: seconds,
    timeout: 10,
    requests,
  };
}

process.on('message', async (job: LoadJob) => {
  try {
    if (job.warmupSeconds > 0) await autocannon(options(job, job.warmupSeconds));
    const r = await autocannon(options(job, job.seconds));
    const result: LoadResult = {
      type: 'result',
      rps: Math.round(r['2xx'] / r.duration),
      p50: r.latency.p50,
      p99: r.latency.p99,
      mean: r.latency.mean,
      max: r.latency.max,
      total: r.requests.total,
      ok: r['2xx'],
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
    };
    process.send!(result);
  } catch (err) {
    process.send!({ type: 'error', error: String(err) });
  }
});
