// A fresh PostgreSQL schema per bench run (so runs never see each other's
// rows), created with an admin connection and dropped at the end; nothing
// on SQLite.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface BenchSchema {
  /** DATABASE_URL on PostgreSQL; undefined on SQLite. */
  databaseUrl: string | undefined;
  schema: string | null;
  /** DATABASE_URL with the schema as its search_path, for a server started in another process. */
  urlWithSchema: string | undefined;
  drop(): Promise<void>;
}

export async function createBenchSchema(backend: string, prefix: string): Promise<BenchSchema> {
  const databaseUrl = backend === 'postgres' ? process.env.DATABASE_URL : undefined;
  if (backend === 'postgres' && !databaseUrl) throw new Error('--backend=postgres needs DATABASE_URL');
  if (!databaseUrl) return { databaseUrl, schema: null, urlWithSchema: undefined, drop: async () => {} };
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin(`create schema ${schema}`);
  const withSchema = new URL(databaseUrl);
  withSchema.searchParams.set('options', `-c search_path=${schema}`);
  return {
    databaseUrl,
    schema,
    urlWithSchema: withSchema.toString(),
    drop: () => admin(`drop schema ${schema} cascade`),
  };
}
