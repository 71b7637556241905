// Writes openapi.json from the route schemas, or with --check fails when the
// committed file differs from what the code generates (CI runs the check).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { writeOrCheck } from './generated-file.js';

const file = join(process.cwd(), 'openapi.json');
const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
try {
  // The document of a default (sandbox) start: no provider credentials set.
  const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dir });
  const database = openDatabase({ databaseUrl: null, dataDir: dir });
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({
    config,
    database,
    secrets: { masterKey: randomBytes(32), jwtSecret: randomBytes(32).toString('hex') },
    logger: false,
  });
  await app.ready();
  const generated = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await database.close();

  writeOrCheck(file, generated, {
    stale: 'openapi.json differs from the document the code generates: run `npm run openapi` and commit it.',
    fresh: 'openapi.json matches the code',
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
