// temp: knowledge search of two builds, alternated
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runKnowledgeBench } from './lib/knowledge.js';
import { startRealServer } from './lib/server.js';
import { createBenchUser } from './lib/setup.js';
import { killAll } from './lib/proc.js';
const entries = process.argv.slice(2);
const tmp = mkdtempSync(join(tmpdir(), 'kbab-'));
const secrets = { MASTER_KEY: randomBytes(32).toString('base64'), JWT_SECRET: randomBytes(48).toString('base64url') };
for (let round = 0; round < 2; round++) {
  for (const entry of round % 2 ? [...entries].reverse() : entries) {
    const server = await startRealServer({ dataDir: join(tmp, `${round}-${entries.indexOf(entry)}`), env: { ...secrets }, entry });
    try {
      const user = await createBenchUser(server.base);
      const r = await runKnowledgeBench({ backend: 'sqlite', base: server.base, apiKey: user.apiKey, seconds: 10 });
      console.log(round, entry, JSON.stringify(r.search), 'recall', r.service.recallAt5);
    } finally { await server.stop(); }
  }
}
killAll();
