import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin } from 'kysely';
import { prepareQuery, runStatement } from '../../src/db/prepared.js';
import { type TestApp, createTestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const insertLimit = prepareQuery((db, p) =>
  db.insertInto('rate_limits').values({ key: p(1), window_start: p<number>(0), count: 7 }),
);
const limitsBetween = prepareQuery((db, p) =>
  db
    .selectFrom('rate_limits')
    .select(['key', 'count'])
    .where('window_start', '>=', p<number>(1))
    .where('key', 'like', p(0))
    .orderBy('key'),
);

describe('prepareQuery', () => {
  it('places arguments by param index, keeps literal values, and is reused across calls', async () => {
    expect(await insertLimit.write(t.database.db, [100, 'prep:a'])).toBe(1);
    expect(await insertLimit.write(t.database.db, [200, 'prep:b'])).toBe(1);
    expect(await limitsBetween.rows(t.database.db, ['prep:%', 150])).toEqual([{ key: 'prep:b', count: 7 }]);
    expect(await limitsBetween.rows(t.database.db, ['prep:%', 0])).toEqual([
      { key: 'prep:a', count: 7 },
      { key: 'prep:b', count: 7 },
    ]);
  });

  it('runs inside a transaction, which rolls it back with the rest', async () => {
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await insertLimit.write(trx, [300, 'prep:rolled-back']);
        expect(await limitsBetween.rows(trx, ['prep:rolled%', 0])).toHaveLength(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await limitsBetween.rows(t.database.db, ['prep:rolled%', 0])).toEqual([]);
  });
});

/** Counts the queries that went through Kysely's executor (its plugins see every one). */
function countingPlugin() {
  const counter = { queries: 0, plugin: null as unknown as KyselyPlugin };
  counter.plugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      counter.queries++;
      return args.result;
    },
  };
  return counter;
}

describe.skipIf(Boolean(process.env.DATABASE_URL))(
  'prepareQuery on SQLite: inside a transaction, straight on the connection',
  () => {
    it("runs hot queries and savepoints of a transaction without Kysely's executor, in the transaction", async () => {
      const counter = countingPlugin();
      const db = t.database.db.withPlugin(counter.plugin);
      await expect(
        db.transaction().execute(async (trx) => {
          await runStatement(trx, 'savepoint direct');
          await insertLimit.write(trx, [400, 'prep:direct']);
          expect(await limitsBetween.rows(trx, ['prep:direct%', 0])).toEqual([{ key: 'prep:direct', count: 7 }]);
          await runStatement(trx, 'release direct');
          expect(counter.queries).toBe(0);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      // Outside a transaction the query goes through Kysely (its connection lock), and the rollback took the row.
      expect(await limitsBetween.rows(db, ['prep:direct%', 0])).toEqual([]);
      expect(counter.queries).toBe(1);
    });

    it('a query outside the transaction waits for it instead of joining it', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inside!: () => void;
      const started = new Promise<void>((resolve) => (inside = resolve));
      const transaction = t.database.db.transaction().execute(async (trx) => {
        await insertLimit.write(trx, [500, 'prep:inside']);
        inside();
        await held;
        throw new Error('roll back');
      });
      await started;
      const outside = insertLimit.write(t.database.db, [500, 'prep:outside']);
      release();
      await expect(transaction).rejects.toThrow('roll back');
      expect(await outside).toBe(1);
      expect(await limitsBetween.rows(t.database.db, ['prep:%side', 0])).toEqual([{ key: 'prep:outside', count: 7 }]);
    });
  },
);

describe.runIf(Boolean(process.env.DATABASE_URL))('prepareQuery on PostgreSQL', () => {
  it('sends hot queries as named prepared statements, planned once per connection', async () => {
    const { sql } = await import('kysely');
    // One connection, so the session that runs the queries is the one asked.
    const { openDatabase } = await import('../../src/db/database.js');
    const database = openDatabase({
      databaseUrl: process.env.DATABASE_URL!,
      dataDir: t.dir,
      pgSchema: t.pgSchema,
      pgPoolSize: 1,
    });
    try {
      for (let i = 0; i < 3; i++) await limitsBetween.rows(database.db, ['prep:%', i]);
      const prepared = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements where name like 'ws_hot_%'`.execute(
        database.db,
      );
      const mine = prepared.rows.filter((r) => r.statement.includes('"rate_limits"') && r.statement.includes('like'));
      expect(mine).toHaveLength(1);
      expect(Number(mine[0].generic_plans) + Number(mine[0].custom_plans)).toBe(3);
    } finally {
      await database.close();
    }
  });
});
