import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
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
});
