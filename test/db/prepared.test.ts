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
