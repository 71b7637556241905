// Bench-only seeding, run in its own process BEFORE the server starts: puts
// phone-verified users straight into the database through the project's own
// UserStore and issues their session JWTs with the project's TokenService and
// the JWT_SECRET the server will share. Thousands of SSE subscribers cannot be
// registered through the rate-limited sign-up routes in a bench's time budget.
import { loadConfig } from '../src/config.js';
import { type DatabaseHandle, openDatabase } from '../src/db/database.js';
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
        {
          email: `bench-${i}@bench.invalid`,
          firstName: 'Bench',
          lastName: String(i),
          phone: `+1555${String(i).padStart(7, '0')}`,
          passwordHash: null,
          phoneVerified: true,
        },
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

export interface LogCounts {
  /** The log's highest id. */
  latestId: number;
  /** Per user asked for (same order): object_created events after `afterId`, and the sum of their ids. */
  perUser: { count: number; idSum: number }[];
}

let reader: DatabaseHandle | null = null;

/**
 * The truth for the fan-out's completeness check, read from the event log while
 * the server runs: what was committed, not what the writer saw answered (a
 * write that timed out at the writer may still have committed).
 */
async function logCounts(userIds: string[], afterId: number): Promise<LogCounts> {
  if (!reader) {
    const config = loadConfig(process.env);
    reader = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgPoolSize: 2 });
  }
  const latest = await reader.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  const rows = userIds.length
    ? await reader.db
        .selectFrom('events')
        .select((eb) => ['user_id', eb.fn.countAll().as('n'), eb.fn.sum('id').as('s')])
        .where('type', '=', 'object_created')
        .where('id', '>', afterId)
        .where('user_id', 'in', [...new Set(userIds)])
        .groupBy('user_id')
        .execute()
    : [];
  const byUser = new Map(rows.map((r) => [r.user_id, { count: Number(r.n), idSum: Number(r.s) }]));
  return { latestId: Number(latest?.id ?? 0), perUser: userIds.map((u) => byUser.get(u) ?? { count: 0, idSum: 0 }) };
}

type Message =
  | { type: 'seed'; count: number }
  | { type: 'log'; userIds: string[]; afterId: number }
  | { type: 'close' };

process.on('message', (msg: Message) => {
  if (msg.type === 'seed') {
    seed(msg.count).then(
      (users) => process.send!({ type: 'seeded', users }, () => process.exit(0)),
      (err) => process.send!({ type: 'error', error: String(err) }, () => process.exit(1)),
    );
  } else if (msg.type === 'log') {
    logCounts(msg.userIds, msg.afterId).then(
      (counts) => process.send!({ type: 'log', ...counts }),
      (err) => process.send!({ type: 'error', error: String(err) }),
    );
  } else {
    void reader?.close().finally(() => process.send!({ type: 'closed' }, () => process.exit(0)));
    if (!reader) process.send!({ type: 'closed' }, () => process.exit(0));
  }
});
