// Entry point: config → storage → key checks → app → listen, with graceful
// shutdown. Problems a self-hoster can fix (configuration, database, port,
// keys) print one line and exit with code 2; see startup.ts.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { lockDataDir } from './db/data-dir-lock.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';
import { CatalogError } from './modules/billing/catalog.js';
import { CallTypeError } from './modules/temporary-sessions/call-types.js';
import { migrateToLatest } from './db/migrate.js';
import { systemClock } from './lib/clock.js';
import { KeyMismatchError, hasMasterKeyCheck, verifyKeys } from './modules/platform/key-check.js';
import { PlatformStore } from './modules/platform/store.js';
import { describeProviders, describeSandboxes } from './providers/index.js';
import { SecretsError, loadSecrets } from './secrets.js';
import { StartupError, describeListenError, waitForPostgres } from './startup.js';

/** Ends start-up with one line on stderr and exit code 2. */
class FatalStartup extends Error {}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) throw new FatalStartup(err.message);
    throw err;
  }
  const early = (message: string) => console.error(message);
  for (const warning of config.warnings) early(`warning: ${warning}`);

  if (config.databaseUrl) {
    await waitForPostgres(config.databaseUrl, config.databaseConnectTimeoutMs, (problem, delay) =>
      early(`database not reachable yet (${problem}); retrying in ${(delay / 1000).toFixed(1)} s`),
    );
  }
  // One server per SQLite data folder (refused with one line before anything in it is touched).
  const dataDirLock = config.databaseUrl ? null : lockDataDir(config.dataDir);
  let database: DatabaseHandle;
  try {
    database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  } catch (err) {
    throw new FatalStartup(
      `cannot open the SQLite database in ${config.dataDir} (DATA_DIR): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  await migrateToLatest(database.db, database.dialect);

  // The key files are created only on a first start: a database that already
  // knows a master key must get that key back, not a new one.
  const platformStore = new PlatformStore(database.db);
  const secrets = loadSecrets(config, { createMasterKey: !(await hasMasterKeyCheck(platformStore)) });
  const { jwtSecretChanged } = await verifyKeys(platformStore, secrets, systemClock, {
    shared: database.dialect === 'postgres',
    rotate: config.jwtSecretRotate,
  });

  // Structured JSON logs; human-readable ones when a person watches a terminal.
  const logger = {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    ...(process.stdout.isTTY
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } } }
      : {}),
  };
  const app = await buildApp({ config, database, secrets, logger });

  const providerLines = describeProviders(app.services.providers);
  const sandboxLines = describeSandboxes(app.services.providers);
  if (config.env === 'production' && sandboxLines.length > 0 && !config.allowSandbox) {
    await database.close();
    throw new FatalStartup(
      `refusing to start in production with sandbox providers (set ALLOW_SANDBOX=1 to allow):\n  ${sandboxLines.join('\n  ')}`,
    );
  }
  if (config.env === 'production' && sandboxLines.length > 0) {
    app.log.warn(
      `ALLOW_SANDBOX=1 in production: sandbox providers do not reach the outside world (${sandboxLines.join('; ')})`,
    );
  }
  if (jwtSecretChanged) {
    app.log.warn(
      database.dialect === 'postgres'
        ? 'JWT_SECRET changed (JWT_SECRET_ROTATE=1): sessions signed with the old secret are no longer accepted; start the other instances with the new JWT_SECRET (and without JWT_SECRET_ROTATE)'
        : 'JWT_SECRET differs from the previous start: every existing session has ended and users sign in again',
    );
  }
  app.log.info(`database: ${database.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'}`);
  for (const line of providerLines) app.log.info(`provider ${line}`);
  app.log.info(`voice agent: ${app.services.voice.description}`);
  const oidc = config.oidcProviders.map((p) => `${p.slug} (${p.issuer})`).join(', ');
  app.log.info(
    `knowledge search: ${app.services.knowledge.embeddings ? `full-text fused with vectors from ${app.services.knowledge.embeddings.name}` : 'full-text only (set EMBEDDINGS_URL to an OpenAI-compatible /v1 endpoint to add vector search)'}`,
  );
  app.log.info(`external sign-in: ${oidc || 'none configured (set OIDC_PROVIDERS)'}`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal}: finishing in-flight requests`);
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    try {
      app.services.housekeeping.stop();
      await app.close();
      await database.close();
      dataDirLock?.release();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // Started by `npm start`: should npm itself be killed without passing the
  // signal on (SIGKILL), the server notices it lost its parent and stops too.
  if (process.env.npm_lifecycle_event === 'start') {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void shutdown('parent process ended');
    }, 1000).unref();
  }

  // Lead credits held by connector jobs that a stopped instance left running: charge what they delivered, return the rest.
  try {
    const settled = await app.services.connect.jobs.recoverAbandoned();
    if (settled > 0) app.log.info(`connect: settled ${settled} abandoned lead job(s)`);
  } catch (err) {
    app.log.error({ err }, 'connect: settling abandoned lead jobs failed; the next start tries again');
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const problem = describeListenError(err, config.host, config.port);
    if (!problem) throw err;
    await app.close().catch(() => {});
    await database.close().catch(() => {});
    throw new FatalStartup(problem);
  }
  app.services.housekeeping.start(15 * 60_000, app.log);
  // Calls carried by an instance that stopped end within a minute (DESIGN.md "Voice agent": scale-out).
  // SQLite: this process holds the data folder's lock, so no other instance is carrying calls: their calls end at once.
  app.services.voice.watchOrphans(30_000, app.log, { exclusive: database.dialect === 'sqlite' });
  // Every instance dials running campaigns; the database decides who places which call (DESIGN.md "Campaigns").
  app.services.campaigns.dialer.start();
  app.log.info(`docs at ${config.publicUrl}/api/docs`);
}

main().catch((err) => {
  // A bad PLANS_FILE / VOICE_PRICING_FILE / TEMPORARY_CALL_TYPES_FILE is a configuration problem too: its message says which and why.
  if (
    err instanceof FatalStartup ||
    err instanceof StartupError ||
    err instanceof SecretsError ||
    err instanceof KeyMismatchError ||
    err instanceof CatalogError ||
    err instanceof CallTypeError
  ) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
