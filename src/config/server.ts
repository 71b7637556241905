// The server itself: where it listens, its database and secrets, its public
// address, logging, CORS, request limits and sessions.
import { isAbsolute, resolve } from 'node:path';
import { defaultRateLimits, developmentRateLimits, parseRateLimits } from '../rate-limit-config.js';
import { flag, integer, optional, optionalInteger, optionalUrl, pattern, section, text } from './declare.js';
import type { Config } from './types.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Read before every section: the other sections' defaults depend on it. */
export const NODE_ENV = text(
  'NODE_ENV',
  'development',
  '`production` refuses to start with a sandbox provider unless `ALLOW_SANDBOX=1`',
);

const v = {
  port: integer('PORT', 3000, 0, 65535, 'HTTP port'),
  host: text(
    'HOST',
    '127.0.0.1',
    'Interface to listen on (`0.0.0.0` for all; then set `PUBLIC_URL`, or links say `localhost`)',
  ),
  dataDir: text('DATA_DIR', './data', 'SQLite database, and generated `master.key` / `jwt.secret` (mode 0600)'),
  databaseUrl: optionalUrl(
    'DATABASE_URL',
    ['postgres:', 'postgresql:'],
    '`postgres://…`: use PostgreSQL instead of SQLite (then `MASTER_KEY` and `JWT_SECRET` are required)',
  ),
  masterKey: optional(
    'MASTER_KEY',
    '32 bytes, base64 (`openssl rand -base64 32`): encrypts secrets at rest. See [the master key](operations.md#the-master-key-and-backups)',
    'generated in `DATA_DIR`',
  ),
  jwtSecret: optional(
    'JWT_SECRET',
    'at least 32 characters: signs session tokens; changing it ends every session (on PostgreSQL a different one refuses to start: see `JWT_SECRET_ROTATE`)',
    'generated in `DATA_DIR`',
  ),
  jwtSecretRotate: flag(
    'JWT_SECRET_ROTATE',
    '`1`: this start may replace the `JWT_SECRET` a PostgreSQL database knows (stop every instance first; remove it afterwards). Without it a different `JWT_SECRET` refuses to start (exit 2)',
  ),
  metricsPort: optionalInteger(
    'METRICS_PORT',
    1,
    65535,
    'serve `/metrics` on this port (on `HOST`) instead of the main port',
  ),
  metricsToken: optional(
    'METRICS_TOKEN',
    'on the main port, `/metrics` requires `Authorization: Bearer <token>` (16+ characters); without it and without `METRICS_PORT`, `/metrics` is open in development and absent in production',
  ),
  publicUrl: optional(
    'PUBLIC_URL',
    'The origin clients reach; used in links, OAuth redirect URIs and callbacks',
    '`http://HOST:PORT`',
  ),
  returnUrlOrigins: optional(
    'RETURN_URL_ORIGINS',
    'Comma-separated origins that `returnTo` / `returnUrl` may point at',
    '`PUBLIC_URL`',
  ),
  nodeEnv: NODE_ENV,
  allowSandbox: flag('ALLOW_SANDBOX', 'Allow sandbox providers in production'),
  logLevel: optional('LOG_LEVEL', LOG_LEVELS.map((l) => `\`${l}\``).join(', '), '`info` (`warn` when `NODE_ENV=test`)'),
  databaseConnectTimeoutSeconds: integer(
    'DATABASE_CONNECT_TIMEOUT_SECONDS',
    30,
    0,
    3600,
    'How long start-up retries an unreachable PostgreSQL (with backoff) before giving up; wrong credentials fail at once',
  ),
  corsOrigins: optional(
    'CORS_ORIGINS',
    'Comma-separated origins whose browser pages may call the API (with credentials); `scheme://host:*` allows any port. See [CORS](operations.md#cors)',
    'production: none; otherwise `PUBLIC_URL`, `http://localhost:*`, `http://127.0.0.1:*`',
  ),
  rateLimitRule: pattern(
    'RATE_LIMIT_<RULE>',
    "One rule's limit as `<requests>/<window>` (e.g. `RATE_LIMIT_LOGIN_PER_IP=30/15m`); read by src/rate-limit-config.ts",
    'every rule with its defaults: [rate limits](operations.md#rate-limits)',
  ),
  rateLimitsJson: pattern('RATE_LIMITS', 'Several rules at once, as JSON (`{"loginPerIp":"30/15m"}`)'),
  trustProxy: flag('TRUST_PROXY', 'Take the client IP from `X-Forwarded-For` (behind a load balancer)'),
  bodyLimitBytes: integer(
    'BODY_LIMIT_BYTES',
    16 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
    'Largest request body; larger → 413',
  ),
  unauthenticatedBodyLimitBytes: integer(
    'UNAUTHENTICATED_BODY_LIMIT_BYTES',
    16 * 1024,
    1024,
    1024 * 1024,
    'Largest body of a route that needs no credentials and of every `/api/auth/*` route (never more than `BODY_LIMIT_BYTES`); larger → 413 before parsing',
  ),
  objectContentLimitBytes: integer(
    'OBJECT_CONTENT_LIMIT_BYTES',
    8 * 1024 * 1024,
    16,
    512 * 1024 * 1024,
    'Largest object ciphertext; larger → 413',
  ),
  relatedPageBytes: integer(
    'RELATED_PAGE_BYTES',
    16 * 1024 * 1024,
    1024,
    1024 * 1024 * 1024,
    'About the largest answer of `GET /api/objects/{id}/related` (JSON bytes); the rest comes on the next page (`X-Next-After`)',
  ),
  authCacheMs: integer(
    'AUTH_CACHE_MS',
    1000,
    0,
    60_000,
    'How long an instance reuses a session or API-key lookup. Logout, password reset, 2FA and key deletion take effect at once on the instance that handled them and within this time on the others; `0` turns the cache off',
  ),
  sessionTtlSeconds: integer(
    'SESSION_TTL_SECONDS',
    24 * 3600,
    60,
    365 * 24 * 3600,
    'Session token and cookie lifetime',
  ),
  rememberTtlSeconds: integer(
    'REMEMBER_TTL_SECONDS',
    30 * 24 * 3600,
    60,
    365 * 24 * 3600,
    'Lifetime when signing in with `remember: true`',
  ),
};

type ServerConfig = Pick<
  Config,
  | 'env'
  | 'host'
  | 'port'
  | 'dataDir'
  | 'databaseUrl'
  | 'masterKey'
  | 'jwtSecret'
  | 'jwtSecretRotate'
  | 'metricsPort'
  | 'metricsToken'
  | 'publicUrl'
  | 'returnUrlOrigins'
  | 'allowSandbox'
  | 'logLevel'
  | 'trustProxy'
  | 'bodyLimitBytes'
  | 'unauthenticatedBodyLimitBytes'
  | 'objectContentLimitBytes'
  | 'relatedPageBytes'
  | 'sessionTtlSeconds'
  | 'authCacheMs'
  | 'rememberTtlSeconds'
  | 'twoFactorPendingTtlSeconds'
  | 'passwordHash'
  | 'rateLimits'
  | 'databaseConnectTimeoutMs'
  | 'corsOrigins'
>;

export const serverSection = section<ServerConfig>(
  'Server',
  v,
  (read, { nodeEnv, cwd, env, problems, problem, warn, url }) => {
    if (!['development', 'production', 'test'].includes(nodeEnv))
      problem(`NODE_ENV must be development, production or test (got "${nodeEnv}")`);
    const port = read(v.port);
    const host = read(v.host);
    const dataDirRaw = read(v.dataDir);
    const databaseUrl = read(v.databaseUrl);
    const masterKey = read(v.masterKey);
    if (masterKey && Buffer.from(masterKey, 'base64').length !== 32)
      problem('MASTER_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
    const jwtSecret = read(v.jwtSecret);
    if (jwtSecret && jwtSecret.length < 32) problem('JWT_SECRET must be at least 32 characters');
    if (databaseUrl && !masterKey) problem('MASTER_KEY is required with DATABASE_URL (every instance must share it)');
    if (databaseUrl && !jwtSecret) problem('JWT_SECRET is required with DATABASE_URL (every instance must share it)');
    const metricsPort = read(v.metricsPort);
    if (metricsPort !== null && metricsPort === port) problem('METRICS_PORT must differ from PORT');
    const metricsToken = read(v.metricsToken);
    if (metricsToken && metricsToken.length < 16) problem('METRICS_TOKEN must be at least 16 characters');

    // Listening on every interface says nothing about the address clients use: links say localhost until PUBLIC_URL says otherwise.
    const wildcardHost = ['0.0.0.0', '::', '[::]'].includes(host);
    const publicUrlRaw = read(v.publicUrl);
    if (wildcardHost && !publicUrlRaw)
      warn(
        `HOST=${host} without PUBLIC_URL: links and redirect URIs use http://localhost:${port}; set PUBLIC_URL to the address clients reach`,
      );
    const defaultHost = wildcardHost ? 'localhost' : host.includes(':') ? `[${host}]` : host;
    const publicUrl = (publicUrlRaw ?? `http://${defaultHost}:${port}`).replace(/\/$/, '');
    url('PUBLIC_URL', publicUrl, ['http:', 'https:']);
    const returnUrlOrigins = (read(v.returnUrlOrigins) ?? publicUrl)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((o) => url('RETURN_URL_ORIGINS', o, ['http:', 'https:'])?.origin ?? o);

    const logLevel = read(v.logLevel) ?? (nodeEnv === 'test' ? 'warn' : 'info');
    if (!LOG_LEVELS.includes(logLevel))
      problem(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);

    const corsOrigins: string[] = [];
    const corsDefault =
      nodeEnv === 'production' ? '' : [publicUrl, 'http://localhost:*', 'http://127.0.0.1:*'].join(',');
    for (const entry of (read(v.corsOrigins) ?? corsDefault)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const anyPort = entry.endsWith(':*');
      const parsed = url('CORS_ORIGINS', anyPort ? entry.slice(0, -2) : entry, ['http:', 'https:']);
      if (!parsed) continue;
      if (parsed.pathname !== '/' || parsed.search || parsed.hash || (anyPort && parsed.port))
        problem(`CORS_ORIGINS: "${entry}" must be an origin (scheme://host[:port], or scheme://host:* for any port)`);
      else corsOrigins.push(anyPort ? `${parsed.origin}:*` : parsed.origin);
    }

    return {
      env: nodeEnv as Config['env'],
      host,
      port,
      dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(cwd, dataDirRaw),
      databaseUrl,
      masterKey,
      jwtSecret,
      jwtSecretRotate: read(v.jwtSecretRotate),
      metricsPort,
      metricsToken,
      publicUrl,
      returnUrlOrigins,
      allowSandbox: read(v.allowSandbox),
      logLevel,
      trustProxy: read(v.trustProxy),
      bodyLimitBytes: read(v.bodyLimitBytes),
      unauthenticatedBodyLimitBytes: read(v.unauthenticatedBodyLimitBytes),
      objectContentLimitBytes: read(v.objectContentLimitBytes),
      relatedPageBytes: read(v.relatedPageBytes),
      sessionTtlSeconds: read(v.sessionTtlSeconds),
      authCacheMs: read(v.authCacheMs),
      rememberTtlSeconds: read(v.rememberTtlSeconds),
      twoFactorPendingTtlSeconds: 10 * 60,
      passwordHash: { memoryCost: 19 * 1024, timeCost: 2 },
      rateLimits: parseRateLimits(
        env,
        nodeEnv === 'development' ? developmentRateLimits(defaultRateLimits) : defaultRateLimits,
        problems,
      ),
      databaseConnectTimeoutMs: read(v.databaseConnectTimeoutSeconds) * 1000,
      corsOrigins,
    };
  },
);
