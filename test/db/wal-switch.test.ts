// Opening a SQLite file while another connection holds it switches it to WAL
// once that connection lets go, instead of failing with "database is locked"
// (two processes starting on one new file, as the migrator's test does).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { loadSqlite, sqliteDriverPath } from '../../src/db/load-sqlite.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Another connection, in its own thread, holding the file's write lock (as a
 * second process switching it to WAL does) for `holdMs`; `released[0]` turns
 * 1 when it has let go.
 */
function holdWriteLock(file: string, holdMs: number): Promise<{ released: Int32Array; done: Promise<number> }> {
  const released = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const db = new (require(workerData.driver))(workerData.file);
     db.exec('begin immediate');
     parentPort.postMessage('held');
     setTimeout(() => { db.exec('commit'); db.close(); Atomics.store(workerData.released, 0, 1); }, workerData.holdMs);`,
    { eval: true, workerData: { driver: sqliteDriverPath(), file, holdMs, released } },
  );
  const done = new Promise<number>((resolve) => worker.once('exit', resolve));
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve({ released, done }));
    worker.once('error', reject);
  });
}

it('waits for a connection that holds the file, then switches it to WAL', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wsapi-wal-'));
  dirs.push(dataDir);
  const file = join(dataDir, 'workspace.sqlite');
  const Driver = loadSqlite();
  const setup = new Driver(file);
  setup.exec('create table t (a)');
  setup.close();
  const reader = new Driver(file, { readonly: true });
  expect(reader.pragma('journal_mode', { simple: true })).toBe('delete');
  reader.close();

  const { released, done } = await holdWriteLock(file, 300);
  // Without the retry this threw SQLITE_BUSY at once: SQLite does not call the busy handler for that upgrade.
  const database = openDatabase({ databaseUrl: null, dataDir, sqliteFile: file });
  try {
    expect(Atomics.load(released, 0)).toBe(1);
    const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(database.db);
    expect(rows[0]?.journal_mode).toBe('wal');
  } finally {
    await database.close();
    await done;
  }
});
