// Runs every migration in src/db/migrations (files sorted by name) at start.
// Each migration receives the dialect so it can pick column types that differ.
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import type { Dialect } from './database.js';

export interface DialectMigration {
  up(db: Kysely<any>, dialect: Dialect): Promise<void>;
}

class FolderMigrationProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const folder = join(dirname(fileURLToPath(import.meta.url)), 'migrations');
    const files = (await readdir(folder)).filter((f) => /^\d.*\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      const mod = (await import(pathToFileURL(join(folder, file)).href)) as DialectMigration;
      migrations[file.replace(/\.(ts|js)$/, '')] = { up: (db) => mod.up(db, this.dialect) };
    }
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>, dialect: Dialect): Promise<void> {
  // On PostgreSQL the migrator's bookkeeping tables must live in the schema
  // this connection uses; otherwise it finds another schema's tables and skips creating its own.
  const migrationTableSchema =
    dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider(dialect), migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
