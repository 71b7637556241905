// The floor: the least a server can do for the object routes on this machine
// with the same stack (Fastify + better-sqlite3, WAL). No auth, no
// validation, no events, no logging: one prepared insert per PUT, one point
// read per GET, the same encodings (base64 in, hex out) as the real server.
//
// With DATABASE_URL it does the same on PostgreSQL (pg, a pool of 20 like the
// server's, one autocommitted insert per PUT): the floor for the PostgreSQL
// backend, so its ratio measures the server rather than the database.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { loadSqlite } from '../src/db/load-sqlite.js';

interface FloorRow {
  id: string;
  key_id: string;
  content: Buffer;
  auth_tag: Buffer;
  created_at: number | string;
}

interface FloorStore {
  insert(id: string, keyId: string, content: Buffer, authTag: Buffer, createdAt: number): Promise<void> | void;
  select(id: string): Promise<FloorRow | undefined> | FloorRow | undefined;
}

function sqliteStore(): FloorStore {
  const dataDir = process.env.DATA_DIR!;
  mkdirSync(dataDir, { recursive: true });
  const db = new (loadSqlite())(join(dataDir, 'floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'create table if not exists objects (id text primary key, key_id text not null, content blob not null, auth_tag blob not null, created_at integer not null)',
  );
  const insert = db.prepare('insert into objects (id, key_id, content, auth_tag, created_at) values (?, ?, ?, ?, ?)');
  const select = db.prepare<[string], FloorRow>(
    'select id, key_id, content, auth_tag, created_at from objects where id = ?',
  );
  return {
    insert: (...args) => void insert.run(...args),
    select: (id) => select.get(id),
  };
}

async function postgresStore(url: string): Promise<FloorStore> {
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  await pool.query(
    'create table if not exists floor_objects (id text primary key, key_id text not null, content bytea not null, auth_tag bytea not null, created_at bigint not null)',
  );
  return {
    insert: async (...args) =>
      void (await pool.query({
        name: 'floor-insert',
        text: 'insert into floor_objects (id, key_id, content, auth_tag, created_at) values ($1, $2, $3, $4, $5)',
        values: args,
      })),
    select: async (id) =>
      (
        await pool.query<FloorRow>({
          name: 'floor-select',
          text: 'select id, key_id, content, auth_tag, created_at from floor_objects where id = $1',
          values: [id],
        })
      ).rows[0],
  };
}

interface PutBody {
  keyId: string;
  content: string;
  authTag: string;
}

const store = process.env.DATABASE_URL ? await postgresStore(process.env.DATABASE_URL) : sqliteStore();
const app = Fastify({ logger: false });
app.get('/api/health', async () => ({ status: 'ok' }));
app.put<{ Body: PutBody }>('/api/objects', async (request) => {
  const { keyId, content, authTag } = request.body;
  const id = randomUUID();
  const createdAt = Date.now();
  // SQLite answers synchronously: await only PostgreSQL, so the SQLite floor stays as lean as before.
  const written = store.insert(id, keyId, Buffer.from(content, 'base64'), Buffer.from(authTag, 'base64'), createdAt);
  if (written) await written;
  return { id, keyId, createdAt: new Date(createdAt).toISOString() };
});
app.get<{ Params: { id: string } }>('/api/objects/:id', async (request, reply) => {
  const found = store.select(request.params.id);
  const row = found instanceof Promise ? await found : found;
  if (!row) return reply.status(404).send({ message: 'not found' });
  return {
    id: row.id,
    keyId: row.key_id,
    content: row.content.toString('hex'),
    auth_tag: row.auth_tag.toString('hex'),
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
});

process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
