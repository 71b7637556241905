import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareQuery } from '../../src/db/prepared.js';
import { type TestApp, createTestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const insertLimit = prepareQuery((db, p) => db.insertInto('rate_limits').values({ key: p(1), window_start: p<number>(0), count: 7 }));
const limitsBetween = prepareQuery((db, p) =>
  db.selectFrom('rate_limits').select(['key', 'count']).where('window_start', '>=', p<number>(1)).where('key', 'like', p(0)).orderBy('key'),
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

describe.runIf(Boolean(process.env.DATABASE_URL))('prepareQuery on PostgreSQL', () => {
  it('sends hot queries as named prepared statements, planned once per connection', async () => {
    const { sql } = await import('kysely');
    // One connection, so the session that runs the queries is the one asked.
    const { openDatabase } = await import('../../src/db/database.js');
    const database = openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: t.dir, pgSchema: t.pgSchema, pgPoolSize: 1 });
    try {
      for (let i = 0; i < 3; i++) await limitsBetween.rows(database.db, ['prep:%', i]);
      const prepared = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements where name like 'ws_hot_%'`.execute(database.db);
      const mine = prepared.rows.filter((r) => r.statement.includes('"rate_limits"') && r.statement.includes('like'));
      expect(mine).toHaveLength(1);
      expect(Number(mine[0].generic_plans) + Number(mine[0].custom_plans)).toBe(3);
    } finally {
      await database.close();
    }
  });
});
