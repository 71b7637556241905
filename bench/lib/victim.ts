// Another user of the API, timed while a benchmark loads the server: GET
// /api/calls at a fixed rate (open loop: sent on schedule, answered or not),
// with its latency percentiles. bench/attack.ts and bench/agent-tests.ts.
import { Agent, request as httpRequest } from 'node:http';
import { sleep } from './proc.js';

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length
    ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10
    : null;
};

export interface VictimFigures {
  requests: number;
  errors: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
}

/** Another user's GET /api/calls at `rate` a second for `seconds` (or until `until` aborts) (open loop: sent on schedule, answered or not), each timed. */
export async function victim(
  base: string,
  token: string,
  seconds: number,
  rate = 50,
  until?: AbortSignal,
): Promise<VictimFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const url = new URL('/api/calls', base);
  const latencies: number[] = [];
  let errors = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          agent,
          headers: { authorization: `Bearer ${token}` },
          timeout: 20_000,
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => {
            // Answered, and right: the victim's (empty) list of calls.
            if (res.statusCode === 200 && Array.isArray((JSON.parse(body) as { calls?: unknown }).calls))
              latencies.push(performance.now() - sent);
            else errors++;
            resolve();
          });
        },
      );
      req.on('error', () => (errors++, resolve()));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
  const pending: Promise<void>[] = [];
  const start = performance.now();
  const total = Math.round(seconds * rate);
  for (let i = 0; i < total && !until?.aborted; i++) {
    const due = start + (i * 1000) / rate;
    if (due > performance.now()) await sleep(due - performance.now());
    pending.push(one());
  }
  await Promise.all(pending);
  agent.destroy();
  return {
    requests: pending.length,
    errors,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.length ? Math.round(Math.max(...latencies)) : null,
  };
}
