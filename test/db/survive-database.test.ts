// The database going away never kills the process. On PostgreSQL every
// connection of an instance is cut from outside (pg_terminate_backend: the
// same 57P01 "terminating connection due to administrator command" a restart
// sends) while requests, a transaction and an event stream are running: the
// process lives, /api/health answers again, and an event written while the
// LISTEN connection was down still reaches the open stream. On both databases,
// a request that cannot reach PostgreSQL answers 503 not_ready, not 500.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { isDatabaseUnavailable, openDatabase } from '../../src/db/database.js';
import { PgEventChannel } from '../../src/modules/events/pg-channel.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { bearer, createVerifiedUser } from '../support/factories.js';
import { emit, eventually, sleep, stream } from '../modules/events/support.js';

const onPostgres = !!process.env.DATABASE_URL;

// An 'error' event nobody listens to would end a real server; here it would surface as an uncaught exception.
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => void uncaught.push(err);
beforeEach(() => {
  uncaught.length = 0;
  process.on('uncaughtException', onUncaught);
});
afterEach(() => {
  process.off('uncaughtException', onUncaught);
});

describe.skipIf(!onPostgres)(
  'PostgreSQL connections cut under load (PostgreSQL only: skipped without DATABASE_URL)',
  () => {
    const name = `wsapi-survive-${randomBytes(4).toString('hex')}`;
    let a: TestApp;
    let b: TestApp;
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    it('keeps the process, answers health again, and delivers an event written while LISTEN was down', {
      timeout: 60_000,
    }, async () => {
      // No safety poll: the event below can only arrive because the LISTEN reconnect re-reads from the last delivered id.
      const events = { ...loadConfig({ NODE_ENV: 'test' }).events, pollIntervalMs: 600_000 };
      a = await createTestApp({ pgApplicationName: name, config: { events } });
      b = await createTestApp({ shareDatabaseWith: a, config: { events } }); // another instance, its connections untouched
      const user = await createVerifiedUser(a);
      const sse = await stream(a, user.token, 'object_deleted');
      const [first] = await emit(b, user.id, [['object_deleted', { object_id: 'before' }]]);
      expect((await sse.waitForEvents(1, 3000))[0].id).toBe(String(first));

      // Requests keep running throughout; every answer must be 200 or 503, never 500.
      const statuses = new Map<number, number>();
      let loading = true;
      const load = (async () => {
        while (loading) {
          const answers = await Promise.all([
            a.app.inject({ method: 'GET', url: '/api/health' }),
            a.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(user.token) }),
          ]);
          for (const res of answers) statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          await sleep(5);
        }
      })();
      try {
        // A transaction holding its connection while the cut happens: the checked-out client gets the error too.
        const held = await a.database.pgPool!.connect();
        await held.query('begin');
        await sleep(100);

        const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
        await admin.connect();
        try {
          const cut = await admin.query(
            "select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name like $1 || '%' and pid <> pg_backend_pid()) t",
            [name],
          );
          expect(cut.rows[0].n).toBeGreaterThanOrEqual(3); // pool connections, the broker's own connection, the LISTEN connection
        } finally {
          await admin.end();
        }
        // Written at once by the untouched instance, while A's LISTEN connection is down: its NOTIFY does not reach A.
        const [during] = await emit(b, user.id, [['object_deleted', { object_id: 'during' }]]);

        const err = await held.query('select 1').then(
          () => null,
          (e: unknown) => e,
        );
        expect(isDatabaseUnavailable(err), String(err)).toBe(true);
        held.release(err as Error);

        await eventually(
          async () => (await a.app.inject({ method: 'GET', url: '/api/health' })).statusCode === 200,
          15_000,
          'health to answer 200',
        );
        const [after] = await emit(a, user.id, [['object_deleted', { object_id: 'after' }]]);
        const delivered = await sse.waitForEvents(3, 10_000);
        expect(delivered.map((e) => e.id)).toEqual([String(first), String(during), String(after)]);
      } finally {
        loading = false;
        await load;
      }

      expect(
        [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
        JSON.stringify([...statuses]),
      ).toEqual([]);
      expect(
        (await a.app.inject({ method: 'GET', url: '/api/api-keys', headers: bearer(user.token) })).statusCode,
      ).toBe(200);
      expect(uncaught).toEqual([]);
      const metrics = await a.app.inject({ method: 'GET', url: '/metrics' });
      expect(Number(/^db_errors_total (\d+)/m.exec(metrics.body)?.[1])).toBeGreaterThanOrEqual(1);
      sse.close();
    });
  },
);

describe('a PostgreSQL that cannot be reached', () => {
  it('answers 503 not_ready on health and on requests, not 500, and the process lives', {
    timeout: 30_000,
  }, async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve)); // nothing listens there now: connections are refused
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-nodb-'));
    const databaseUrl = `postgres://nobody:nothing@127.0.0.1:${port}/nowhere`;
    const database = openDatabase({ databaseUrl, dataDir: dir, pgPoolSize: 2 });
    const config = { ...loadConfig({ NODE_ENV: 'test', DATA_DIR: dir }), databaseUrl };
    const app = await buildApp({
      config,
      database,
      secrets: { masterKey: randomBytes(32), jwtSecret: 'j'.repeat(40) },
      logger: false,
    });
    try {
      const health = await app.inject({ method: 'GET', url: '/api/health' });
      expect(health.statusCode).toBe(503);
      expect(health.json().code).toBe('not_ready');
      const login = await app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: 'a@example.com', password: 'whatever-password' },
      });
      expect(login.statusCode, login.body).toBe(503);
      expect(login.json()).toEqual({
        code: 'not_ready',
        message: 'the database is unavailable right now; try again in a few seconds',
      });
      expect(login.headers['retry-after']).toBe('5');
      const listing = await app.inject({
        method: 'GET',
        url: '/api/api-keys',
        headers: bearer('wsk_not-a-real-key-but-looked-up'),
      });
      expect(listing.statusCode, listing.body).toBe(503);
      expect(uncaught).toEqual([]);
      const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(Number(/^db_errors_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2); // the two requests answered 503
      expect(metrics).toMatch(/^http_requests_total\{method="POST",route="\/api\/auth\/login",status="503"\} 1$/m);
    } finally {
      await app.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps retrying the LISTEN connection with backoff and logs the outage once', { timeout: 30_000 }, async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-nodb-'));
    const database = openDatabase({
      databaseUrl: `postgres://nobody:nothing@127.0.0.1:${port}/nowhere`,
      dataDir: dir,
      pgPoolSize: 1,
    });
    const errors: unknown[] = [];
    const channel = new PgEventChannel(database.pgPool!, {
      reconnectDelayMs: 20,
      maxReconnectDelayMs: 80,
      onError: (err) => errors.push(err),
    });
    let connected = 0;
    try {
      await channel.listen({ onHint: () => {}, onConnected: () => void (connected += 1) });
      await eventually(
        () => (channel as unknown as { attempt: number }).attempt >= 4,
        10_000,
        'four reconnect attempts',
      );
      expect(errors).toHaveLength(1);
      expect(isDatabaseUnavailable(errors[0])).toBe(true);
      expect(connected).toBe(0);
      expect(uncaught).toEqual([]);
    } finally {
      await channel.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
