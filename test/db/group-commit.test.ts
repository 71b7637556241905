import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { addUrgentPoll } from '../../src/lib/urgent-work.js';

// Group commit is SQLite-only (DataStore uses plain transactions on PostgreSQL).
describe.skipIf(Boolean(process.env.DATABASE_URL))('GroupCommit (SQLite)', () => {
  let dir: string;
  let database: DatabaseHandle;
  let db: Kysely<any>;
  let transactionsBegun: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-group-'));
    database = openDatabase({ databaseUrl: null, dataDir: dir });
    db = database.db as unknown as Kysely<any>;
    await sql`create table parents (id integer primary key)`.execute(db);
    await sql`create table items (id integer primary key, parent_id integer references parents(id) deferrable initially deferred)`.execute(
      db,
    );
    await sql`insert into parents (id) values (1)`.execute(db);
    transactionsBegun = 0;
    const original = db.transaction.bind(db);
    db.transaction = () => {
      transactionsBegun += 1;
      return original();
    };
  });

  afterEach(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const ids = async () =>
    (await sql<{ id: number }>`select id from items order by id`.execute(db)).rows.map((r) => r.id);
  const insert =
    (id: number, parent = 1) =>
    (trx: Kysely<any>) =>
      sql`insert into items (id, parent_id) values (${id}, ${parent})`.execute(trx).then(() => id);

  it('commits writes that arrive together in one transaction, each answered with its own result', async () => {
    const group = new GroupCommit(database.db);
    const results = await Promise.all([1, 2, 3, 4, 5].map((id) => group.run(insert(id))));
    expect(results).toEqual([1, 2, 3, 4, 5]);
    expect(await ids()).toEqual([1, 2, 3, 4, 5]);
    expect(transactionsBegun).toBe(1);
    // A write arriving while a batch runs waits for the next one.
    const first = group.run(insert(6));
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([first, group.run(insert(7)), group.run(insert(8))]);
    expect(await ids()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(transactionsBegun).toBe(3);
  });

  it('rolls back only the write that failed; the others in its batch commit', async () => {
    const group = new GroupCommit(database.db);
    const failing = async (trx: Kysely<any>) => {
      await insert(12)(trx);
      throw new Error('rule broken after a write');
    };
    const settled = await Promise.allSettled([
      group.run(insert(10)),
      group.run(insert(11)),
      group.run(failing),
      group.run(insert(13)),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason.message).toBe('rule broken after a write');
    expect(await ids()).toEqual([10, 11, 13]);
  });

  it('fails every write of a batch whose commit fails, and none of them is stored', async () => {
    const group = new GroupCommit(database.db);
    // The deferred foreign key is checked at commit: parent 99 does not exist.
    await group.run(insert(20));
    const settled = await Promise.allSettled([group.run(insert(21)), group.run(insert(22, 99)), group.run(insert(23))]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
    expect(await ids()).toEqual([20]);
    // The queue keeps working after a failed batch.
    await group.run(insert(24));
    expect(await ids()).toEqual([20, 24]);
  });

  it('caps a batch at maxBatch transactions', async () => {
    const group = new GroupCommit(database.db, 3);
    await Promise.all(Array.from({ length: 10 }, (_, i) => group.run(insert(100 + i))));
    expect(await ids()).toHaveLength(10);
    expect(transactionsBegun).toBe(4); // 3 + 3 + 3 + 1
  });

  /** A group commit whose writes and urgent-work polls are logged in `order`. */
  async function withUrgentLog(
    test: (
      group: GroupCommit,
      write: (id: number) => (trx: Kysely<any>) => Promise<number>,
      order: string[],
    ) => Promise<void>,
  ) {
    const order: string[] = [];
    const remove = addUrgentPoll(() => order.push('urgent'));
    try {
      await test(
        new GroupCommit(database.db),
        (id) => async (trx) => {
          order.push(`write ${id}`);
          return insert(id)(trx);
        },
        order,
      );
    } finally {
      remove();
    }
  }

  it('runs urgent work (src/lib/urgent-work.ts) between the writes of a batch, without leaving its turn', () =>
    withUrgentLog(async (group, write, order) => {
      const writes = [1, 2, 3].map((id) => group.run(write(id)));
      setImmediate(() => order.push('next turn'));
      expect(await Promise.all(writes)).toEqual([1, 2, 3]);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(order).toEqual(['write 1', 'urgent', 'write 2', 'urgent', 'write 3', 'urgent', 'next turn']);
      expect(transactionsBegun).toBe(1);
    }));

  it('runs urgent work between batches that follow each other in one turn (a write queued by the caller of the last one)', () =>
    withUrgentLog(async (group, write, order) => {
      // Each caller's next write is queued as soon as its last one committed (as a call's end chains its writes).
      const chain = async () => {
        await group.run(write(1));
        await group.run(write(2));
        await group.run(write(3));
      };
      const done = chain();
      setImmediate(() => order.push('next turn'));
      await done;
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(await ids()).toEqual([1, 2, 3]);
      expect(order).toEqual(['write 1', 'urgent', 'write 2', 'urgent', 'write 3', 'urgent', 'next turn']);
    }));
});
