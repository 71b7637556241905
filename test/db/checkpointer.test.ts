import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalCheckpointer } from '../../src/db/checkpointer.js';
import { openDatabase } from '../../src/db/database.js';
import { loadSqlite } from '../../src/db/load-sqlite.js';
import { migrateToLatest } from '../../src/db/migrate.js';

describe.skipIf(Boolean(process.env.DATABASE_URL))('SQLite WAL checkpoints in the background worker', () => {
  it('leaves commits to the WAL and copies them into the database file when checkpointing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-wal-'));
    const database = openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      await migrateToLatest(database.db, database.dialect);
      const rows = Array.from({ length: 2000 }, (_, i) => ({ key: `k${i}`, window_start: i, count: 1 }));
      for (let i = 0; i < rows.length; i += 200) await database.db.insertInto('rate_limits').values(rows.slice(i, i + 200)).execute();
      const wal = statSync(join(dir, 'workspace.sqlite-wal')).size;
      expect(wal).toBeGreaterThan(0);
      const result = await database.checkpoint();
      expect(result!.log).toBeGreaterThan(0);
      expect(result!.checkpointed).toBe(result!.log);
      const count = await database.db.selectFrom('rate_limits').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(2000);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers checkpointNow() with its own checkpoint, not a timer checkpoint still queued from before the writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-wal-'));
    const file = join(dir, 'wal.sqlite');
    const sqlite = new (loadSqlite())(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('wal_autocheckpoint = 0');
    const checkpointer = new WalCheckpointer(file, 5);
    try {
      expect((await checkpointer.checkpointNow()).log).toBe(0); // the worker is up; the WAL is empty
      // The event loop is held (as by synchronous SQLite work) while the timer checkpoints the empty WAL:
      // its answers wait in the queue. Then the writes, then the request.
      const until = Date.now() + 300;
      while (Date.now() < until) {
        /* busy */
      }
      sqlite.exec('create table t (x integer)');
      const insert = sqlite.prepare('insert into t values (?)');
      for (let i = 0; i < 500; i++) insert.run(i);
      const result = await checkpointer.checkpointNow();
      expect(result.log).toBeGreaterThan(0);
      expect(result.checkpointed).toBe(result.log);
    } finally {
      await checkpointer.close();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
