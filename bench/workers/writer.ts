// The fan-out writer: creates objects at a steady rate (PUT /api/objects),
// round-robin over its targets, each ciphertext stamped with its send time.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { newHistogram, percentileMs, record } from '../lib/histogram.js';
import { sleep } from '../lib/proc.js';
import { stampedContent } from '../lib/stamp.js';

export interface WriteTarget {
  token: string;
  keyId: string;
}

export interface WriterJob {
  type: 'run';
  port: number;
  targets: WriteTarget[];
  rate: number;
  seconds: number;
  size: number;
  answerWaitMs: number;
}

// No socket cap: a capped pool would queue writes here, and the latency would be the writer's own.
const agent = new Agent({ keepAlive: true });
const filler = randomBytes(64 * 1024);
const authTag = randomBytes(16).toString('base64');

function put(port: number, target: WriteTarget, size: number): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({
    keyId: target.keyId,
    content: stampedContent(size, filler).toString('base64'),
    authTag,
  });
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'PUT',
        path: '/api/objects',
        agent,
        headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end(body);
  });
}

async function run(job: WriterJob) {
  const total = Math.round(job.rate * job.seconds);
  const written = new Array<number>(job.targets.length).fill(0);
  const latency = newHistogram();
  const failures: string[] = [];
  let maxLagMs = 0;
  let lastSend = 0;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / job.rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    else maxLagMs = Math.max(maxLagMs, -wait);
    const index = i % job.targets.length;
    const sent = (lastSend = performance.now());
    pending.push(
      put(job.port, job.targets[index], job.size).then((res) => {
        record(latency, (performance.now() - sent) * 1000);
        if (res.status === 200 || res.status === 201) written[index] += 1;
        else failures.push(`${res.status} ${res.body.slice(0, 200)}`);
      }),
    );
  }
  // Answers still missing this long after the last write count as failures (the run stays bounded).
  const gaveUp = await Promise.race([Promise.all(pending).then(() => false), sleep(job.answerWaitMs).then(() => true)]);
  const answeredFailures = failures.length;
  const unanswered = gaveUp ? total - written.reduce((a, b) => a + b, 0) - answeredFailures : 0;
  if (unanswered > 0)
    failures.unshift(`${unanswered} writes unanswered ${job.answerWaitMs} ms after the last was sent`);
  const sendWindow = (lastSend - t0) / 1000 + 1 / job.rate;
  return {
    type: 'done',
    written,
    failed: answeredFailures + unanswered,
    failureSamples: failures.slice(0, 3),
    /** Writes sent per second (the schedule holds unless this process lags). */
    achievedRate: Math.round((total / sendWindow) * 10) / 10,
    maxLagMs: Math.round(maxLagMs),
    putP50: percentileMs(latency, 50),
    putP99: percentileMs(latency, 99),
  };
}

process.on('message', (job: WriterJob | { type: 'ready' }) => {
  // The orchestrator asks before the writes, so this process's own start is over when they begin.
  if (job.type === 'ready') return void process.send!({ type: 'ready' });
  run(job).then(
    (result) => process.send!(result, () => process.exit(0)),
    (err) => process.send!({ type: 'error', error: String(err) }, () => process.exit(1)),
  );
});
