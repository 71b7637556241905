// Start-up problems a self-hoster can fix: each becomes one line naming the
// problem (main.ts prints it and exits with code 2), never a stack trace.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadPg } from './db/load-pg.js';

export class StartupError extends Error {}

/** The URL without its password, for messages. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

interface PgProblem {
  text: string;
  /** Worth retrying: the server may not be up yet (containers starting together). */
  transient: boolean;
}

const TRANSIENT_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  '57P03': 'the database server is starting up',
  '53300': 'too many connections',
};

function describePgError(err: unknown): PgProblem {
  const e = (err ?? {}) as { code?: string; message?: string; errors?: Array<{ code?: string }> };
  const code = e.code ?? e.errors?.find((inner) => inner.code)?.code;
  if (code && TRANSIENT_CODES[code]) return { text: TRANSIENT_CODES[code], transient: true };
  if (/timeout/i.test(e.message ?? '')) return { text: 'connection timed out', transient: true };
  if (code === '28P01' || code === '28000') return { text: e.message ?? 'authentication failed', transient: false };
  if (code === '3D000') return { text: e.message ?? 'database does not exist', transient: false };
  return { text: (e.message ?? String(err)).split('\n')[0], transient: false };
}

/**
 * Connects to PostgreSQL once with a throwaway client, retrying with backoff
 * while the server is unreachable, up to `timeoutMs`. Wrong credentials or a
 * missing database fail at once. Throws StartupError.
 */
export async function waitForPostgres(
  databaseUrl: string,
  timeoutMs: number,
  onRetry: (problem: string, delayMs: number) => void,
): Promise<void> {
  const pg = loadPg();
  const deadline = Date.now() + timeoutMs;
  let delay = 250;
  for (;;) {
    const client = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: Math.max(1000, Math.min(5000, deadline - Date.now())),
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => {});
      const problem = describePgError(err);
      const where = `the database at ${redactDatabaseUrl(databaseUrl)} (DATABASE_URL)`;
      if (!problem.transient) throw new StartupError(`cannot use ${where}: ${problem.text}`);
      if (Date.now() + delay > deadline) {
        throw new StartupError(
          `cannot reach ${where}: ${problem.text}; gave up after ${Math.round(timeoutMs / 1000)} s (DATABASE_CONNECT_TIMEOUT_SECONDS)`,
        );
      }
      onRetry(problem.text, delay);
      await sleep(delay);
      delay = Math.min(delay * 2, 5000);
    }
  }
}

/** A failed listen() as one line naming the variable to change; null for errors that are not about HOST or PORT. */
export function describeListenError(err: unknown, host: string, port: number): string | null {
  const code = (err as { code?: string } | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is already in use (PORT): stop the other server or choose another port`;
    case 'EACCES':
      return `no permission to listen on port ${port} (PORT): ports below 1024 need privileges; choose another port`;
    case 'EADDRNOTAVAIL':
      return `HOST "${host}" is not an address of this machine (use 127.0.0.1, 0.0.0.0 or one of its addresses)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `HOST "${host}" does not resolve to an address`;
    default:
      return null;
  }
}
