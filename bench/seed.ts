// Bench-only seeding, run in its own process BEFORE the server starts: puts
// phone-verified users straight into the database through the project's own
// UserStore and issues their session JWTs with the project's TokenService and
// the JWT_SECRET the server will share. Thousands of SSE subscribers cannot be
// registered through the rate-limited sign-up routes in a bench's time budget.
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { systemClock } from '../src/lib/clock.js';
import { UserStore, newUserRow } from '../src/modules/auth/store.js';
import { TokenService } from '../src/modules/auth/tokens.js';
import { loadSecrets } from '../src/secrets.js';

export interface SeededUser {
  id: string;
  token: string;
}

async function seed(count: number): Promise<SeededUser[]> {
  const config = loadConfig(process.env);
  const secrets = loadSecrets(config);
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgPoolSize: 4 });
  try {
    await migrateToLatest(database.db, database.dialect);
    const users = new UserStore(database.db);
    const tokens = new TokenService(secrets.jwtSecret, systemClock);
    const seeded: SeededUser[] = [];
    const now = Date.now();
    for (let i = 0; i < count; i++) {
      const row = newUserRow(
        { email: `bench-${i}@bench.invalid`, firstName: 'Bench', lastName: String(i), phone: `+1555${String(i).padStart(7, '0')}`, passwordHash: null, phoneVerified: true },
        now,
      );
      if (!(await users.insert(row))) throw new Error(`seed user ${row.email} already exists`);
      const issued = await tokens.issue(row, { ttlSeconds: 6 * 3600, twoFactorPassed: false });
      seeded.push({ id: row.id, token: issued.token });
    }
    return seeded;
  } finally {
    await database.close();
  }
}

process.on('message', (msg: { type: 'seed'; count: number }) => {
  seed(msg.count).then(
    (users) => process.send!({ type: 'seeded', users }, () => process.exit(0)),
    (err) => process.send!({ type: 'error', error: String(err) }, () => process.exit(1)),
  );
});
