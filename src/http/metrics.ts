// What operators watch: one log line per request (instead of Fastify's two),
// request metrics, database connection errors, and /metrics in Prometheus
// text — on METRICS_PORT when set, else on the main port behind
// METRICS_TOKEN, else open outside production and absent (404) in it.
import { timingSafeEqual } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Metrics } from '../modules/platform/metrics.js';

/** Routes with no pattern (404s) share one label value, so scanners cannot grow the label set. */
const UNMATCHED = 'unmatched';

export function installRequestObservation(app: FastifyInstance, metrics: Metrics): void {
  // One label object per (method, route, status), made once: prom-client then hashes the same object, and a request
  // allocates nothing for its metrics.
  const labelSets = new Map<string, { method: string; route: string; status: string }>();
  app.addHook('onResponse', (request, reply, done) => {
    const method = request.method;
    const route = request.routeOptions.url ?? UNMATCHED;
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    const key = `${method} ${status} ${route}`;
    let labels = labelSets.get(key);
    if (!labels) labelSets.set(key, (labels = { method, route, status: String(status) }));
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, ms / 1000);
    const level = status >= 500 ? 'error' : 'info';
    // The line is built only when it is written (LOG_LEVEL=warn skips every 2xx).
    const log = request.log as typeof request.log & { isLevelEnabled?: (level: string) => boolean };
    if (!log.isLevelEnabled || log.isLevelEnabled(level)) {
      const userId = (request as { auth?: { userId?: string } | null }).auth?.userId;
      request.log[level](
        {
          method,
          route,
          url: request.url,
          status,
          durationMs: Math.round(ms * 10) / 10,
          ...(userId ? { userId } : {}),
        },
        'request',
      );
    }
    done();
  });
}

/** Counts and logs (at most once per `quietMs`, with how many were not logged) the database's connection errors. */
export function watchDatabaseErrors(
  app: FastifyInstance,
  database: DatabaseHandle,
  metrics: Metrics,
  quietMs = 10_000,
): void {
  let lastLogged = Number.NEGATIVE_INFINITY;
  let unlogged = 0;
  const stop = database.onConnectionError((err) => {
    metrics.dbErrors.inc();
    const now = Date.now();
    if (now - lastLogged < quietMs) {
      unlogged += 1;
      return;
    }
    lastLogged = now;
    const message = err instanceof Error ? err.message : String(err);
    app.log.warn(
      { code: (err as { code?: string } | null)?.code, ...(unlogged ? { notLogged: unlogged } : {}) },
      `database connection error: ${message} (the pool opens new connections when the database answers again)`,
    );
    unlogged = 0;
  });
  app.addHook('onClose', async () => void stop());
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function registerMetricsEndpoint(app: FastifyInstance, config: Config, metrics: Metrics): void {
  if (config.metricsPort !== null) {
    let server: Server | null = null;
    app.addHook('onListen', async () => {
      server = createServer((req, res) => {
        if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ message: 'only GET /metrics here', code: 'route_not_found' }));
          return;
        }
        metrics.text().then(
          (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
          (err) => {
            app.log.error({ err }, 'metrics: collecting failed');
            res.writeHead(500).end();
          },
        );
      });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(config.metricsPort!, config.host, () => resolve());
      });
      app.log.info(`metrics at http://${config.host}:${config.metricsPort}/metrics`);
    });
    app.addHook('onClose', async () => {
      if (server) await new Promise((resolve) => server!.close(resolve));
    });
    return;
  }
  const token = config.metricsToken;
  if (!token && config.env === 'production') return; // absent: the 404 of any unknown route
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token) {
      const header = request.headers.authorization ?? '';
      const given = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!sameToken(given, token)) {
        return reply
          .status(401)
          .header('www-authenticate', 'Bearer')
          .send({ message: 'send Authorization: Bearer $METRICS_TOKEN', code: 'unauthenticated' });
      }
    }
    return reply.header('content-type', metrics.contentType).send(await metrics.text());
  });
}
