// What operators watch: /metrics in Prometheus text (by route pattern, never
// the raw URL), where it is served and who may read it, and one log line per
// request with method, route, status, duration, request id and user id.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, createVerifiedUser, topUp } from '../support/factories.js';
import { stream } from '../modules/events/support.js';
import { freePort } from '../support/ports.js';

/** Every sample of the text format: `name{labels} value` → value, keyed by `name{labels}` exactly as written. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe('/metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('counts requests by route pattern and status, with latency histograms and the gauges operators need', async () => {
    const user = await createVerifiedUser(t);
    for (let i = 0; i < 3; i++)
      expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    await t.app.inject({
      method: 'GET',
      url: '/api/objects/0190aaaa-0000-7000-8000-000000000001',
      headers: bearer(user.token),
    });
    await t.app.inject({ method: 'GET', url: '/api/no-such-thing/zqxjkv' });
    await topUp(t, user, 5);
    const sse = await stream(t, user.token, 'object_deleted');
    t.services.voice.runner.observe.turnLatency({
      sttMs: 120,
      llmFirstTokenMs: 300,
      ttsFirstByteMs: 90,
      overheadMs: 10,
      totalMs: 520,
    });

    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parse(res.body);
    expect(m.get('http_requests_total{method="GET",route="/api/health",status="200"}')).toBeGreaterThanOrEqual(3);
    expect(
      m.get('http_request_duration_seconds_count{method="GET",route="/api/health",status="200"}'),
    ).toBeGreaterThanOrEqual(3);
    expect(
      m.get('http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/health",status="200"}'),
    ).toBeGreaterThanOrEqual(3);
    expect(m.get('http_requests_total{method="GET",route="/api/objects/:id",status="404"}')).toBe(1);
    expect(m.get('http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    // A path segment of letters: digits could be in any figure of the text (a sum's 0.0123456 failed it once in CI).
    expect(res.body).not.toContain('zqxjkv');
    expect(res.body).not.toContain('0190aaaa');
    expect(m.get('sse_streams_open')).toBe(1);
    expect(m.get('calls_in_progress')).toBe(0);
    expect(m.get('webhook_queue_depth')).toBe(0);
    expect(m.get('webhook_failures_total')).toBe(0);
    expect(m.get('ledger_writes_total')).toBeGreaterThanOrEqual(1); // the top-up's credit
    expect(m.get('voice_turn_latency_seconds_count{stage="stt"}')).toBe(1);
    expect(m.get('voice_turn_latency_seconds_sum{stage="total"}')).toBeCloseTo(0.52);
    expect(m.get('db_errors_total')).toBe(0);
    expect(m.has('process_cpu_user_seconds_total')).toBe(true);
    expect(m.has('nodejs_eventloop_lag_seconds')).toBe(true);
    if (t.database.dialect === 'postgres')
      expect(m.get('db_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    else expect(res.body).not.toMatch(/^db_pool_connections\{/m);
    sse.close();
  });

  it('needs Authorization: Bearer $METRICS_TOKEN when METRICS_TOKEN is set', async () => {
    const token = 'metrics-token-0123456789';
    const guarded = await createTestApp({ config: { metricsToken: token } });
    try {
      expect((await guarded.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect(
        (await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer('metrics-token-0123456780') }))
          .statusCode,
      ).toBe(401);
      expect((await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer('short') })).statusCode).toBe(
        401,
      );
      const ok = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('# TYPE http_requests_total counter');
    } finally {
      await guarded.close();
    }
  });

  it('is absent (404) in production without a token or a port, and served there with the token', async () => {
    const production = await createTestApp({ config: { env: 'production' } });
    try {
      const res = await production.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('route_not_found');
    } finally {
      await production.close();
    }
    const token = 'production-metrics-token-42';
    const withToken = await createTestApp({ config: { env: 'production', metricsToken: token } });
    try {
      expect((await withToken.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      expect((await withToken.app.inject({ method: 'GET', url: '/metrics', headers: bearer(token) })).statusCode).toBe(
        200,
      );
    } finally {
      await withToken.close();
    }
  });

  it('is served on METRICS_PORT, and then not on the main port', async () => {
    const metricsPort = await freePort();
    const separate = await createTestApp({ config: { metricsPort, host: '127.0.0.1' } });
    try {
      await separate.app.listen({ port: 0, host: '127.0.0.1' });
      const main = (separate.app.server.address() as { port: number }).port;
      expect((await fetch(`http://127.0.0.1:${main}/metrics`)).status).toBe(404);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE http_request_duration_seconds histogram');
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/health`)).status).toBe(404);
    } finally {
      await separate.close();
    }
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow(); // closed with the app
  });
});

describe('request log', () => {
  it('writes exactly one line per request: method, route, status, duration, request id, user id', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const t = await createTestApp({ logger: { level: 'info', stream: sink } });
    try {
      const user = await createVerifiedUser(t);
      lines.length = 0;
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/api-keys?limit=5',
        headers: { ...bearer(user.token), 'x-request-id': 'trace-abc-123' },
      });
      expect(res.statusCode).toBe(200);
      const mine = lines.filter((l) => l.reqId === 'trace-abc-123');
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        level: 30,
        msg: 'request',
        method: 'GET',
        route: '/api/api-keys',
        url: '/api/api-keys?limit=5',
        status: 200,
        userId: user.id,
      });
      expect(typeof mine[0].durationMs).toBe('number');
      expect(lines).toHaveLength(1);

      lines.length = 0;
      await t.app.inject({ method: 'GET', url: '/api/health', headers: { 'x-request-id': 'anon-1' } });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ reqId: 'anon-1', route: '/api/health', status: 200 });
      expect(lines[0]).not.toHaveProperty('userId');
    } finally {
      await t.close();
    }
  });
});
