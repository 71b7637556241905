// Builds an app on a real database for one test file: a fresh SQLite file in a
// temp dir, or, when DATABASE_URL is set (CI), a fresh PostgreSQL schema.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyServerOptions } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { type Config, type RateLimits, defaultRateLimits, loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Providers } from '../../src/providers/index.js';
import type { BillingAccount } from '../../src/modules/billing/account.js';

/** Per-IP limits high enough that a test file's many sign-ups from 127.0.0.1 pass; per-account limits as in production. */
export const relaxedIpLimits: RateLimits = {
  ...defaultRateLimits,
  registerPerIp: { limit: 10_000, windowMs: 60_000 },
  loginPerIp: { limit: 10_000, windowMs: 60_000 },
  verifyRequestPerIp: { limit: 10_000, windowMs: 60_000 },
  resetRequestPerIp: { limit: 10_000, windowMs: 60_000 },
  resetSubmitPerIp: { limit: 10_000, windowMs: 60_000 },
  temporarySessionPerIp: { limit: 10_000, windowMs: 60_000 },
};

export interface TestAppOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  providers?: Partial<Providers>;
  /** An in-memory BillingAccount (test/support/billing-memory.ts) instead of the real one. */
  billing?: BillingAccount;
  clock?: ManualClock;
  /** Another test app whose database (PostgreSQL schema or SQLite file) and secrets this one uses, like a second instance. */
  shareDatabaseWith?: { dir: string; pgSchema: string | undefined; secrets: { masterKey: Buffer; jwtSecret: string } };
  /** PostgreSQL application_name of the app's connections (tests that cut them find them by it). */
  pgApplicationName?: string;
  /** Fastify logger options (tests that read the log); no logging by default. */
  logger?: FastifyServerOptions['logger'];
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

export async function createTestApp(options: TestAppOptions = {}) {
  const shared = options.shareDatabaseWith;
  const dir = shared?.dir ?? mkdtempSync(join(tmpdir(), 'wsapi-test-'));
  const databaseUrl = process.env.DATABASE_URL ?? null;
  const pgSchema = shared ? shared.pgSchema : databaseUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
  if (databaseUrl && pgSchema && !shared) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`create schema ${pgSchema}`);
    await client.end();
  }
  // Calls use the quick timer stand-in unless a test asks for the sandbox carrier (SANDBOX_CALLS=voice, real time).
  const base = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, SANDBOX_CALLS: 'timer', ...options.env });
  const config: Config = { ...base, databaseUrl, rateLimits: relaxedIpLimits, ...options.config };
  const database = openDatabase({
    databaseUrl,
    dataDir: dir,
    pgSchema,
    pgPoolSize: 5,
    pgApplicationName: options.pgApplicationName,
  });
  await migrateToLatest(database.db, database.dialect);
  const clock = options.clock ?? new ManualClock();
  const secrets = shared?.secrets ?? { masterKey: randomBytes(32), jwtSecret: randomBytes(32).toString('hex') };
  const app = await buildApp({
    config,
    database,
    secrets,
    clock,
    providers: options.providers,
    billing: options.billing,
    logger: options.logger ?? false,
  });
  await app.ready();

  const close = async () => {
    await app.close();
    await database.close();
    if (shared) return; // the app that created the database removes it
    if (databaseUrl && pgSchema) {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`drop schema ${pgSchema} cascade`);
      await client.end();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { app, services: app.services, config, database, clock, dir, pgSchema, secrets, close };
}
