// The SQLite database and its WAL files hold account data: only the owner may read them.
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('SQLite data files', () => {
  it('are created 0600 (database, -wal and -shm) in a 0700 directory', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'wsapi-files-'));
    dirs.push(parent);
    const dir = join(parent, 'data');
    const database = openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      await sql`create table t (x integer)`.execute(database.db);
      await sql`insert into t values (1)`.execute(database.db);
      expect(mode(dir)).toBe('700');
      for (const file of ['workspace.sqlite', 'workspace.sqlite-wal', 'workspace.sqlite-shm'])
        expect(mode(join(dir, file)), file).toBe('600');
    } finally {
      await database.close();
    }
  });

  it('narrows the files of an older install to 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wsapi-files-'));
    dirs.push(dir);
    const first = openDatabase({ databaseUrl: null, dataDir: dir });
    await sql`create table t (x integer)`.execute(first.db);
    await first.close();
    writeFileSync(join(dir, 'workspace.sqlite-wal'), '');
    chmodSync(join(dir, 'workspace.sqlite'), 0o644);
    chmodSync(join(dir, 'workspace.sqlite-wal'), 0o644);
    const again = openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      expect(mode(join(dir, 'workspace.sqlite'))).toBe('600');
      expect(mode(join(dir, 'workspace.sqlite-wal'))).toBe('600');
    } finally {
      await again.close();
    }
  });
});
