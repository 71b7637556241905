// Opens the database named by the config: SQLite (better-sqlite3, chosen by
// load-sqlite.ts for the running Node.js; WAL) under
// DATA_DIR by default, PostgreSQL when DATABASE_URL is set. Both run the same
// migrations and are used through the same Kysely interface.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import * as sqliteVec from 'sqlite-vec';
import { loadPg } from './load-pg.js';
import { loadSqlite } from './load-sqlite.js';
import { registerSqliteRunner, statementNames } from './prepared.js';
import { type CheckpointResult, WAL_RESET_FRAMES, WalCheckpointer } from './checkpointer.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

/**
 * An SQL aggregate function written in JavaScript, as better-sqlite3 takes
 * it: a start state, a step per row (the state and the call's arguments,
 * whatever their number and types: `never` accepts any), a result.
 */
export interface SqliteAggregate {
  start: () => unknown;
  step: (state: never, ...args: never[]) => unknown;
  result?: (state: never) => unknown;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The PostgreSQL pool, for LISTEN/NOTIFY; null on SQLite. */
  pgPool: pg.Pool | null;
  /** SQLite: the database file (worker threads open their own read-only connections to it); null on PostgreSQL. */
  sqliteFile: string | null;
  /**
   * PostgreSQL: a Kysely over connections of its own (at most `max`), closed
   * with the handle, for work that must not queue behind request traffic in
   * the shared pool (the event broker's tail reads). SQLite: the one db.
   */
  dedicated(max: number): Kysely<Database>;
  ping(): Promise<void>;
  /**
   * SQLite: defines an aggregate function on the connection, for a module's
   * own queries (the analytics store's one-pass fold). PostgreSQL runs no
   * JavaScript in queries: it throws there.
   */
  defineSqliteAggregate(name: string, aggregate: SqliteAggregate): void;
  /** Checkpoints SQLite's WAL now (it otherwise happens every second in the background); null on PostgreSQL. */
  checkpoint(): Promise<CheckpointResult | null>;
  close(): Promise<void>;
  /**
   * Hears about errors of idle or busy connections (the server restarted or
   * went away). They are handled here and never thrown; the listener logs
   * and counts them. Returns a function that removes the listener.
   */
  onConnectionError(listener: (err: unknown) => void): () => void;
}

export interface OpenOptions {
  databaseUrl: string | null;
  dataDir: string;
  sqliteFile?: string;
  /** PostgreSQL schema to use instead of the default (tests isolate themselves this way). */
  pgSchema?: string;
  pgPoolSize?: number;
  /** PostgreSQL application_name of this instance's connections (pg_stat_activity); 'workspace-api' by default. */
  pgApplicationName?: string;
  /** SQLite: ms between background WAL checkpoints (1,000 by default; tests shorten it). */
  walCheckpointMs?: number;
  /** SQLite: WAL frames past which writers wait for the WAL to start over (WAL_RESET_FRAMES by default; tests lower it). */
  walResetFrames?: number;
}

/**
 * Errors that mean "the database cannot be reached right now" rather than "this
 * query is wrong": refused or dropped connections, a server shutting down or
 * starting up (57P01–57P03), connection exceptions (class 08), too many
 * connections, a pool that timed out connecting. Requests that meet one answer
 * 503, not 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] };
  const code = typeof e.code === 'string' ? e.code : '';
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  if (typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message)) return true;
  return Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable);
}
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect|Connection terminated due to connection timeout)/i;

export function openDatabase(options: OpenOptions): DatabaseHandle {
  if (options.databaseUrl) {
    const listeners = new Set<(err: unknown) => void>();
    // A connection that breaks (server restart, failover, network) emits 'error': on the pool while idle, on
    // the client itself while checked out. Without a listener either one ends the process. The pool drops
    // the broken client; the next query opens a new connection.
    const connectionError = (err: unknown) => {
      for (const listener of listeners) {
        try {
          listener(err);
        } catch {
          // a listener's fault must not turn a handled error into a crash
        }
      }
    };
    const openPool = (max: number) => {
      const pool = new (loadPg().Pool)({
        connectionString: options.databaseUrl!,
        max,
        // Unreachable hosts fail a request within seconds (503) instead of holding it forever.
        connectionTimeoutMillis: 5000,
        application_name: options.pgApplicationName ?? 'workspace-api',
        ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
      });
      pool.on('error', connectionError);
      pool.on('connect', (client) => {
        client.on('error', connectionError);
        namePreparedStatements(client);
      });
      return pool;
    };
    const pool = openPool(options.pgPoolSize ?? 20);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const side: Kysely<Database>[] = [];
    return {
      db,
      dialect: 'postgres',
      pgPool: pool,
      sqliteFile: null,
      dedicated: (max) => {
        const own = new Kysely<Database>({ dialect: new PostgresDialect({ pool: openPool(max) }) });
        side.push(own);
        return own;
      },
      ping: async () => void (await sql`select 1`.execute(db)),
      defineSqliteAggregate: (name) => {
        throw new Error(`${name}: PostgreSQL has no JavaScript aggregates`);
      },
      checkpoint: async () => null,
      close: async () => {
        await Promise.all(side.map((k) => k.destroy()));
        await db.destroy();
      },
      onConnectionError: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
  }
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const file = options.sqliteFile ?? join(options.dataDir, 'workspace.sqlite');
  restrictToOwner(file);
  const sqlite = new (loadSqlite())(file);
  switchToWal(sqlite);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Vector functions (vec_distance_cosine, …) for knowledge search.
  sqliteVec.load(sqlite);
  // Checkpoints run in a worker thread, not inside request commits (see checkpointer.ts).
  sqlite.pragma('wal_autocheckpoint = 0');
  const walResetFrames = options.walResetFrames ?? WAL_RESET_FRAMES;
  const checkpointer = new WalCheckpointer(file, options.walCheckpointMs, undefined, walResetFrames);
  // When the WAL starts over, its file is cut back to the limit (SQLite otherwise keeps the largest it ever was).
  const pageBytes = sqlite.pragma('page_size', { simple: true }) as number;
  sqlite.pragma(`journal_size_limit = ${Math.min(walResetFrames * pageBytes, 2 ** 40)}`);
  const statements = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: statements }) });
  registerSqliteRunner(db, {
    // What Kysely's SQLite driver does with a statement, minus its executor.
    all: (text, parameters) => {
      const statement = statements.prepare(text);
      if (statement.reader) return statement.all(parameters as unknown[]);
      statement.run(parameters as unknown[]);
      return [];
    },
    run: (text, parameters) => {
      const statement = statements.prepare(text);
      if (!statement.reader) return statement.run(parameters as unknown[]).changes;
      statement.all(parameters as unknown[]);
      return 0; // Kysely's driver counts no changes for a statement that returns rows
    },
    writeBarrier: () => checkpointer.writeBarrier(),
  });
  return {
    db,
    dialect: 'sqlite',
    pgPool: null,
    sqliteFile: file,
    dedicated: () => db,
    ping: async () => void sqlite.prepare('select 1').get(),
    // (The driver's types know of a step with one argument.)
    defineSqliteAggregate: (name, aggregate) =>
      void sqlite.aggregate(name, aggregate as unknown as SQLite.AggregateOptions),
    checkpoint: () => checkpointer.checkpointNow(),
    close: async () => {
      await db.destroy();
      await checkpointer.close();
    },
    onConnectionError: () => () => {},
  };
}

/** How long opening waits for other connections switching the same new file to WAL. */
const WAL_SWITCH_WAIT_MS = 5000;

/**
 * Puts the file in WAL mode. The switch reads the header under a shared lock,
 * then rewrites it: when two processes open a new file at the same moment
 * (two servers are kept apart by the data folder's lock, but not the
 * migrator's test processes or a tool beside the server) both hold the shared lock,
 * and SQLite answers the second one's upgrade with SQLITE_BUSY at once, without
 * the busy handler, because waiting there could deadlock. That one lets go and
 * tries again until the other is done.
 */
function switchToWal(sqlite: SQLite.Database): void {
  const deadline = Date.now() + WAL_SWITCH_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      // Opening is synchronous (startup, tests); a few milliseconds, jittered so two waiters part.
      Atomics.wait(pause, 0, 0, 5 + Math.random() * 20);
    }
  }
}

/**
 * The database holds account data: only its owner may read it. SQLite gives
 * the -wal and -shm files the mode of the database file, so creating that file
 * 0600 covers all three; files of an older install are narrowed here too.
 */
function restrictToOwner(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}

/**
 * Sends the hot queries (prepared.ts) of this connection as named prepared
 * statements: PostgreSQL parses and plans them on first use only. Kysely's
 * driver calls client.query(text, values); everything else passes unchanged.
 */
function namePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? statementNames.get(text) : undefined;
    return name ? query({ name, text, values }, callback) : query(text, values, callback);
  }) as typeof client.query;
}

/**
 * Kysely's SQLite driver calls prepare(sql) for every query; preparing costs
 * as much as running a point query. Statements are reused by SQL text (the
 * driver runs them synchronously, one at a time), keeping the most recently
 * used ones: queries with variable-length IN lists make new texts.
 */
export function withStatementCache(sqlite: SQLite.Database, capacity = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}
