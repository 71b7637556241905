// The SQLite driver, better-sqlite3, is installed twice (package.json) and
// chosen here by the running Node.js:
// - Node 20: `better-sqlite3` 12, compiled at install for this Node. 13
//   declares and needs Node 22 (its worker threads die under 20).
// - Node 22 and later: `better-sqlite3-napi`, an npm alias of better-sqlite3
//   13, a Node-API build whose prebuilt binary in the package loads on every
//   Node version from 22 on without compiling. 12 wraps its objects in the
//   raw node::ObjectWrap, which aborts the process on Node 24 when a
//   statement is freed (`Assertion failed: (env) != nullptr` in
//   node::RemoveEnvironmentCleanupHook); upstream will not fix it in 12.
// Everything that opens SQLite (database.ts, data-dir-lock.ts, the
// checkpointer's worker, tests, bench) goes through loadSqlite() or
// sqliteDriverPath(), so the process never loads both.
import { createRequire } from 'node:module';
import type SQLite from 'better-sqlite3';
import { StartupError } from '../startup.js';

export interface SqliteDriver {
  /** The name it is installed under in node_modules. */
  package: 'better-sqlite3' | 'better-sqlite3-napi';
  /** The better-sqlite3 major version behind that name. */
  major: 12 | 13;
}

/** Node 20 (and anything before 22) gets better-sqlite3 12; Node 22 and later get 13 (Node-API). */
export function sqliteDriverFor(nodeVersion: string): SqliteDriver {
  const major = Number.parseInt(nodeVersion.replace(/^v/, ''), 10);
  if (!Number.isSafeInteger(major)) throw new Error(`not a Node.js version: ${nodeVersion}`);
  return major >= 22 ? { package: 'better-sqlite3-napi', major: 13 } : { package: 'better-sqlite3', major: 12 };
}

const require = createRequire(import.meta.url);
let loaded: typeof SQLite | null = null;

/** The driver chosen for this Node.js, loaded once. Throws a one-line StartupError saying what to do when it cannot load. */
export function loadSqlite(): typeof SQLite {
  loaded ??= requireDriver(sqliteDriverFor(process.versions.node), process.versions.node);
  return loaded;
}

/** The file to require() for the chosen driver, for worker threads (the WAL checkpointer). */
export function sqliteDriverPath(): string {
  return require.resolve(sqliteDriverFor(process.versions.node).package);
}

/** Exported for tests: requires `driver` with `load` (normally this module's require) and explains a failure. */
export function requireDriver(
  driver: SqliteDriver,
  nodeVersion: string,
  load: (id: string) => unknown = require,
): typeof SQLite {
  try {
    const Driver = load(driver.package) as typeof SQLite;
    // better-sqlite3 12 loads its native binary only when the first database opens: open one here, so a
    // binary built for another Node.js fails now, with this message, not later as a problem of some file.
    new Driver(':memory:').close();
    return Driver;
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ').replace(/\.$/, '');
    throw new StartupError(
      `cannot load the SQLite driver ${driver.package} (better-sqlite3 ${driver.major}, the one for Node.js ${nodeVersion}): ${reason}; ` +
        `run npm ci (or npm install) with this Node.js, or npm rebuild ${driver.package} after changing Node.js versions`,
    );
  }
}
