// Entry point: config → storage → app → listen, with graceful shutdown.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { describeProviders } from './providers/index.js';
import { loadSecrets } from './secrets.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const secrets = loadSecrets(config);
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(database.db, database.dialect);
  // Structured JSON logs; human-readable ones when a person watches a terminal.
  const logger = {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    ...(process.stdout.isTTY ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss', ignore: 'pid,hostname' } } } : {}),
  };
  const app = await buildApp({ config, database, secrets, logger });

  const providerLines = describeProviders(app.services.providers);
  const sandboxed = Object.values(app.services.providers).some((p) => p.sandbox);
  if (config.env === 'production' && sandboxed && !config.allowSandbox) {
    console.error(`refusing to start in production with sandbox providers (set ALLOW_SANDBOX=1 to allow):\n  ${providerLines.join('\n  ')}`);
    await database.close();
    process.exit(2);
  }
  app.log.info(`database: ${database.dialect === 'sqlite' ? `SQLite in ${config.dataDir}` : 'PostgreSQL'}`);
  for (const line of providerLines) app.log.info(`provider ${line}`);
  const oidc = config.oidcProviders.map((p) => `${p.slug} (${p.issuer})`).join(', ');
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
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // Lead credits held by connector jobs that a stopped instance left running: charge what they delivered, return the rest.
  try {
    const settled = await app.services.connect.jobs.recoverAbandoned();
    if (settled > 0) app.log.info(`connect: settled ${settled} abandoned lead job(s)`);
  } catch (err) {
    app.log.error({ err }, 'connect: settling abandoned lead jobs failed; the next start tries again');
  }

  await app.listen({ port: config.port, host: config.host });
  app.services.housekeeping.start(15 * 60_000, app.log);
  app.log.info(`docs at ${config.publicUrl}/api/docs`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
