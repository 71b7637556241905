// Connector ingestion (issue 14): a local connector streams N records of about
// the object size as NDJSON; one POST /api/connect ingests them all. Reported
// as records/s next to PUT /api/objects req/s measured on the same server in
// the same run, with every object_created counted at a subscriber.
import { type IncomingMessage, type Server, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoadFigures } from './report.js';
import { type RunningServer, startRealServer } from './server.js';
import { type BenchUser, createBenchUser } from './setup.js';
import { withCpu } from './proc.js';

export interface IngestResult {
  backend: string;
  records: number;
  recordBytes: number;
  /** From sending POST /api/connect to its 204. */
  seconds: number | null;
  recordsPerSecond: number | null;
  serverCpuPct: number | null;
  /** PUT /api/objects (1 KiB, API key, 50 connections) on the same server, right after. */
  put: LoadFigures | null;
  /** recordsPerSecond ÷ PUT req/s. */
  ratio: number | null;
  /** object_created events for the ingested records that reached the subscriber. */
  eventsDelivered: number;
  /** From sending the POST to the last of those events arriving. */
  lastEventMs: number | null;
  written: number | null;
  error?: string;
}

/** A connector backend that streams `params.count` NDJSON records as fast as the reader takes them. */
async function startBenchConnector(recordBytes: number): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const count = Number(JSON.parse(body || '{}').count ?? 10);
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const base = JSON.stringify({
      n: 0,
      firstName: 'Bench',
      lastName: 'Record',
      phone: '+14155550100',
      email: 'bench@example.com',
      notes: '',
    });
    const pad = 'x'.repeat(Math.max(0, recordBytes - base.length - 8));
    for (let n = 0; n < count; n++) {
      const line = `${JSON.stringify({ n, firstName: 'Bench', lastName: 'Record', phone: '+14155550100', email: 'bench@example.com', notes: pad })}\n`;
      if (!res.write(line)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Counts object_created events on one stream; `until(n)` resolves when n have arrived (or after timeoutMs). */
function countEvents(url: string, token: string) {
  let count = 0;
  let tail = '';
  const waiters: Array<() => void> = [];
  return new Promise<{
    count: () => number;
    until: (n: number, timeoutMs: number) => Promise<number>;
    close: () => void;
  }>((resolve, reject) => {
    const req = httpRequest(
      url,
      { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`event stream answered ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const lines = (tail + chunk).split('\n');
          tail = lines.pop() ?? '';
          for (const line of lines) if (line === 'event: object_created') count++;
          for (const w of waiters.splice(0)) w();
        });
        resolve({
          count: () => count,
          until: (n, timeoutMs) =>
            new Promise((done) => {
              const deadline = setTimeout(() => done(count), timeoutMs);
              const check = () => {
                if (count >= n) {
                  clearTimeout(deadline);
                  done(count);
                } else waiters.push(check);
              };
              check();
            }),
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function connect(
  server: RunningServer,
  user: BenchUser,
  count: number,
): Promise<{ status: number; written: number | null }> {
  const res = await fetch(`${server.base}/api/connect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ repository: 'contacts', path: '/bench', params: { count } }),
  });
  const text = await res.text();
  if (res.status !== 204) throw new Error(`POST /api/connect answered ${res.status}: ${text.slice(0, 300)}`);
  const written = res.headers.get('x-objects-written');
  return { status: res.status, written: written === null ? null : Number(written) };
}

export async function runIngest(options: {
  backend: string;
  dataDir: string;
  env: Record<string, string>;
  records: number;
  recordBytes: number;
  measurePut: (server: RunningServer, user: BenchUser) => Promise<LoadFigures>;
}): Promise<IngestResult> {
  const connector = await startBenchConnector(options.recordBytes);
  const server = await startRealServer({
    dataDir: options.dataDir,
    env: { ...options.env, CONNECTOR_URL: connector.url },
  });
  const result: IngestResult = {
    backend: options.backend,
    records: options.records,
    recordBytes: options.recordBytes,
    seconds: null,
    recordsPerSecond: null,
    serverCpuPct: null,
    put: null,
    ratio: null,
    eventsDelivered: 0,
    lastEventMs: null,
    written: null,
  };
  try {
    const user = await createBenchUser(server.base);
    await connect(server, user, 500); // warm-up (JIT, root and store creation), not counted
    const root = (await (
      await fetch(`${server.base}/api/root`, { headers: { authorization: `Bearer ${user.jwt}` } })
    ).json()) as { stores: { contacts: { id: string } } };
    const events = await countEvents(
      `${server.base}/api/events/object_created?related_object_id=${root.stores.contacts.id}`,
      user.jwt,
    );
    try {
      const t0 = performance.now();
      const { value, cpuPct } = await withCpu(server.pid, () => connect(server, user, options.records));
      const seconds = (performance.now() - t0) / 1000;
      Object.assign(result, {
        seconds: Math.round(seconds * 100) / 100,
        recordsPerSecond: Math.round(options.records / seconds),
        serverCpuPct: cpuPct,
        written: value.written,
      });
      result.eventsDelivered = await events.until(options.records, 60_000);
      if (result.eventsDelivered >= options.records) result.lastEventMs = Math.round(performance.now() - t0);
    } finally {
      events.close();
    }
    result.put = await options.measurePut(server, user);
    result.ratio =
      result.recordsPerSecond && result.put.rps
        ? Math.round((result.recordsPerSecond / result.put.rps) * 100) / 100
        : null;
  } catch (err) {
    result.error = String(err).slice(0, 300);
  } finally {
    const crash = server.crash();
    if (crash) result.error = crash.slice(0, 300);
    await server.stop();
    await connector.close();
  }
  return result;
}
