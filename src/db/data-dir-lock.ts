// One server per SQLite data folder. Two processes writing one SQLite file
// through their own caches (event log cursors, search indexes, rate-limit
// windows, calls they carry) would each believe it is alone; instances share
// data only through PostgreSQL. The lock is SQLite's own file lock on a small
// database `DATA_DIR/server.lock`, held for the life of the process by an open
// write transaction: the operating system drops it when the process ends,
// however it ends (crash, SIGKILL, power), so there is no stale lock to clean
// up and no pid that a later process could reuse to look alive. The holder's
// pid is written beside it (`server.pid`) only to name it in the refusal.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { StartupError } from '../startup.js';
import { loadSqlite } from './load-sqlite.js';

export interface DataDirLock {
  /** Gives the folder up (at shutdown; the end of the process does it too). */
  release(): void;
}

/** Takes the data folder for this process, or throws a one-line StartupError naming the process that has it. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockFile = join(dataDir, 'server.lock');
  const pidFile = join(dataDir, 'server.pid');
  // Outside the try below: a driver that cannot load says so itself (StartupError), not as a lock-file problem.
  const Driver = loadSqlite();
  let lock: SQLite.Database;
  try {
    closeSync(openSync(lockFile, 'a', 0o600));
    // timeout 0: a held lock answers SQLITE_BUSY at once instead of being waited for.
    lock = new Driver(lockFile, { timeout: 0 });
    lock.pragma('journal_mode = DELETE');
  } catch (err) {
    throw new StartupError(`cannot open ${lockFile} (DATA_DIR): ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    // A reserved lock: another process's BEGIN IMMEDIATE fails while this transaction is open.
    lock.exec('BEGIN IMMEDIATE');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code !== 'SQLITE_BUSY')
      throw new StartupError(`cannot lock ${lockFile} (DATA_DIR): ${err instanceof Error ? err.message : String(err)}`);
    const pid = readPid(pidFile);
    throw new StartupError(
      `the data folder ${dataDir} (DATA_DIR) is in use by another server${pid ? ` (pid ${pid})` : ''}: stop it or give this one another DATA_DIR; instances share data only through PostgreSQL (DATABASE_URL)`,
    );
  }
  writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      rmSync(pidFile, { force: true });
      lock.close();
    },
  };
}

function readPid(pidFile: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
