import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalCheckpointer } from '../../src/db/checkpointer.js';
import { openDatabase } from '../../src/db/database.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { loadSqlite } from '../../src/db/load-sqlite.js';
import { migrateToLatest } from '../../src/db/migrate.js';

describe.skipIf(Boolean(process.env.DATABASE_URL))('SQLite WAL checkpoints in the background worker', () => {
  it('leaves commits to the WAL and copies them into the database file when checkpointing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-wal-'));
    const database = openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      await migrateToLatest(database.db, database.dialect);
      const rows = Array.from({ length: 2000 }, (_, i) => ({ key: `k${i}`, window_start: i, count: 1 }));
      for (let i = 0; i < rows.length; i += 200)
        await database.db
          .insertInto('rate_limits')
          .values(rows.slice(i, i + 200))
          .execute();
      const wal = statSync(join(dir, 'workspace.sqlite-wal')).size;
      expect(wal).toBeGreaterThan(0);
      const result = await database.checkpoint();
      expect(result!.log).toBeGreaterThan(0);
      expect(result!.checkpointed).toBe(result!.log);
      const count = await database.db
        .selectFrom('rate_limits')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
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

  it('keeps the WAL bounded under writes that never pause: writers wait for one whole checkpoint past the limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-wal-'));
    // 256 frames (1 MiB) before the WAL must start over; a background checkpoint every 20 ms, as every second in production.
    const database = openDatabase({ databaseUrl: null, dataDir: dir, walCheckpointMs: 20, walResetFrames: 256 });
    const walBytes = () => statSync(join(dir, 'workspace.sqlite-wal')).size;
    try {
      await migrateToLatest(database.db, database.dialect);
      const writes = new GroupCommit(database.db);
      const pad = 'x'.repeat(2000);
      let written = 0;
      let largest = 0;
      let restarts = 0;
      let last = walBytes();
      // Batch after batch with no pause between them: a background checkpoint never finds the WAL still, so
      // without the barrier SQLite never starts it over (this loop then left a WAL of ~295 MB here, never shrinking).
      const until = Date.now() + 2000;
      while (Date.now() < until) {
        await Promise.all(
          Array.from({ length: 16 }, () =>
            writes.run((trx) =>
              trx
                .insertInto('rate_limits')
                .values({ key: `k${written++}${pad}`, window_start: 0, count: 1 })
                .execute(),
            ),
          ),
        );
        const size = walBytes();
        if (size < last) restarts += 1; // started over, and cut back to journal_size_limit
        largest = Math.max(largest, size);
        last = size;
      }
      expect(restarts).toBeGreaterThanOrEqual(3);
      // With it, the WAL holds the limit plus what is written while a checkpoint runs: 8 MB on a quiet machine, one
      // to two times the bytes written on a loaded one (the key is stored twice: the row and its index; 57 MB for 28 MB
      // written seen once), never the 5x of every page of every write (295 MB).
      expect(largest).toBeLessThan(written * 2000 * 3);
      const count = await database.db
        .selectFrom('rate_limits')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(written);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
