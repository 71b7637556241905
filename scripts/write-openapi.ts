// Writes openapi.json from the route schemas, or with --check fails when the
// committed file differs from what the code generates (CI runs the check).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

const file = join(process.cwd(), 'openapi.json');
const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
try {
  // The document of a default (sandbox) start: no provider credentials set.
  const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dir });
  const database = openDatabase({ databaseUrl: null, dataDir: dir });
  await migrateToLatest(database.db, database.dialect);
  const app = await buildApp({ config, database, secrets: { masterKey: randomBytes(32), jwtSecret: randomBytes(32).toString('hex') }, logger: false });
  await app.ready();
  const generated = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await database.close();

  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(file, 'utf8');
    } catch {
      /* missing counts as different */
    }
    if (committed !== generated) {
      console.error('openapi.json differs from the document the code generates: run `npm run openapi` and commit it.');
      process.exit(1);
    }
    console.log('openapi.json matches the code');
  } else {
    writeFileSync(file, generated);
    console.log(`wrote ${file}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
