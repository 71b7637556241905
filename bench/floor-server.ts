// The floor: the least a server can do for the object routes on this machine
// with the same stack (Fastify + better-sqlite3, WAL). No auth, no
// validation, no events, no logging: one prepared insert per PUT, one point
// read per GET, the same encodings (base64 in, hex out) as the real server.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';

const dataDir = process.env.DATA_DIR!;
mkdirSync(dataDir, { recursive: true });
const db = new SQLite(join(dataDir, 'floor.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('create table if not exists objects (id text primary key, key_id text not null, content blob not null, auth_tag blob not null, created_at integer not null)');
const insert = db.prepare('insert into objects (id, key_id, content, auth_tag, created_at) values (?, ?, ?, ?, ?)');
const select = db.prepare<[string], { id: string; key_id: string; content: Buffer; auth_tag: Buffer; created_at: number }>(
  'select id, key_id, content, auth_tag, created_at from objects where id = ?',
);

interface PutBody {
  keyId: string;
  content: string;
  authTag: string;
}

const app = Fastify({ logger: false });
app.get('/api/health', async () => ({ status: 'ok' }));
app.put<{ Body: PutBody }>('/api/objects', async (request) => {
  const { keyId, content, authTag } = request.body;
  const id = randomUUID();
  const createdAt = Date.now();
  insert.run(id, keyId, Buffer.from(content, 'base64'), Buffer.from(authTag, 'base64'), createdAt);
  return { id, keyId, createdAt: new Date(createdAt).toISOString() };
});
app.get<{ Params: { id: string } }>('/api/objects/:id', async (request, reply) => {
  const row = select.get(request.params.id);
  if (!row) return reply.status(404).send({ message: 'not found' });
  return { id: row.id, keyId: row.key_id, content: row.content.toString('hex'), auth_tag: row.auth_tag.toString('hex'), createdAt: new Date(row.created_at).toISOString() };
});

process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
