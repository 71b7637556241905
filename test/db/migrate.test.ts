// The migrator: applies each migration once, also when instances start together,
// and on PostgreSQL is not disturbed by other schemas coming and going.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';

const databaseUrl = process.env.DATABASE_URL ?? null;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl! });
  await client.connect();
  try {
    await client.query(query);
  } finally {
    await client.end();
  }
}

interface Fresh {
  open(): DatabaseHandle;
  /** Migrates from a separate process, as another instance would; resolves to the names it applied. */
  migrateElsewhere(): Promise<string[]>;
}

const fixture = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'migrate-once.ts');

/** A fresh database (SQLite file or PostgreSQL schema). */
async function freshDatabase(): Promise<Fresh> {
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-migrate-'));
  const pgSchema = databaseUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
  if (pgSchema) await admin(`create schema ${pgSchema}`);
  cleanups.push(async () => {
    if (pgSchema) await admin(`drop schema ${pgSchema} cascade`);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    open() {
      const database = openDatabase({ databaseUrl, dataDir: dir, pgSchema, pgPoolSize: 2 });
      cleanups.push(() => database.close());
      return database;
    },
    async migrateElsewhere() {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', fixture, dir, pgSchema ?? '']);
      return JSON.parse(stdout) as string[];
    },
  };
}

describe('the migrations index', () => {
  it('lists every file of src/db/migrations, sorted by name, each with its up()', () => {
    const folder = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'db', 'migrations');
    const files = readdirSync(folder)
      .filter((f) => /^\d.*\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(MIGRATIONS.map((m) => m.name)).toEqual(files);
    for (const { name, migration } of MIGRATIONS) expect(typeof migration.up, name).toBe('function');
  });
});

describe('migrateToLatest', () => {
  it('applies every migration once and nothing on the next start', async () => {
    const database = (await freshDatabase()).open();
    const first = await migrateToLatest(database.db, database.dialect);
    expect(first.length).toBeGreaterThan(0);
    expect(await migrateToLatest(database.db, database.dialect)).toEqual([]);
    const recorded = await database.db
      .selectFrom('kysely_migration' as any)
      .select('name')
      .execute();
    expect(recorded.map((r: any) => r.name)).toEqual(first);
  });

  it('applies each migration once when two instances start at the same moment', async () => {
    const fresh = await freshDatabase();
    const [a, b] = await Promise.all([fresh.migrateElsewhere(), fresh.migrateElsewhere()]);
    expect([a.length, b.length].sort((x, y) => x - y)).toEqual([0, a.length + b.length]);
    expect(a.length + b.length).toBeGreaterThan(0);
    await fresh.open().db.selectFrom('objects').select('id').execute();
  });

  it.skipIf(!databaseUrl)('succeeds while other schemas in the database are created and dropped', async () => {
    // Kysely's Migrator scanned every schema's tables and failed with "schema … does not exist" here.
    let churning = true;
    const churn = (async () => {
      let rounds = 0;
      while (churning || rounds < 5) {
        const other = `t_churn_${randomBytes(4).toString('hex')}`;
        await admin(
          `create schema ${other}; create table ${other}.a (id serial primary key, b text); create table ${other}.c (id int)`,
        );
        await admin(`drop schema ${other} cascade`);
        rounds++;
      }
    })();
    try {
      for (let i = 0; i < 8; i++) {
        const database = (await freshDatabase()).open();
        expect((await migrateToLatest(database.db, database.dialect)).length).toBeGreaterThan(0);
      }
    } finally {
      churning = false;
      await churn;
    }
  });
});
