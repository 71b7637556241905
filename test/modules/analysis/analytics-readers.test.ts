// AnalyticsReaders: SQLite's analytics folds in worker threads, each with a
// read-only connection of its own to the server's file. The fold itself is
// checked against a reference through the app (analytics-reference.test.ts,
// whose 16-day ranges go to the readers as two halves); here, the threads.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type SQLite from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadSqlite } from '../../../src/db/load-sqlite.js';
import { ANALYTICS_FOLD } from '../../../src/modules/analysis/analytics-fold.js';
import { AnalyticsReaders } from '../../../src/modules/analysis/analytics-readers.js';

let dir: string;
let file: string;
let writer: SQLite.Database;
const opened: AnalyticsReaders[] = [];

function readers(size = 2, idleMs = 60_000): AnalyticsReaders {
  const r = new AnalyticsReaders(file, size, idleMs);
  opened.push(r);
  return r;
}

/** A query whose one row's `folded` column counts the calls from `since`. */
const COUNT = `select json_object('calls', count(*)) as folded from calls where created_at >= ?`;
/** Most of a second of one core: the recursive count does not finish before the test acts. */
const SLOW = `with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000000)
              select json_object('i', max(i)) as folded from n`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'analytics-readers-'));
  file = join(dir, 'workspace.sqlite');
  writer = new (loadSqlite())(file);
  writer.pragma('journal_mode = WAL');
  writer.exec('create table calls (created_at integer not null)');
  const insert = writer.prepare('insert into calls (created_at) values (?)');
  for (let i = 0; i < 10; i++) insert.run(i);
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

afterAll(() => {
  writer.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('AnalyticsReaders', () => {
  it('answers from its own connection what the writer has committed, with the fold defined there', async () => {
    const r = readers();
    expect(JSON.parse(await r.fold(COUNT, [4]))).toEqual({ calls: 6 });
    writer.prepare('insert into calls (created_at) values (?)').run(100);
    expect(JSON.parse(await r.fold(COUNT, [4]))).toEqual({ calls: 7 });
    writer.prepare('delete from calls where created_at = 100').run();
    // The aggregate exists on the reader's connection (an unknown function would be an error).
    const folded = JSON.parse(await r.fold(`select ${ANALYTICS_FOLD}(null, 0, 1, 2, null, null) as folded`, []));
    expect(folded).toHaveProperty('counts');
  });

  it('cannot write: its connection is read-only', async () => {
    const r = readers();
    await expect(r.fold(`insert into calls (created_at) values (1) returning 'x' as folded`, [])).rejects.toThrow(
      /analytics read: .*readonly/,
    );
    expect(writer.prepare('select count(*) as n from calls').get()).toEqual({ n: 10 });
  });

  it('rejects a failing query with its reason and goes on answering', async () => {
    const r = readers(1);
    await expect(r.fold('select folded from nowhere', [])).rejects.toThrow(/analytics read: no such table: nowhere/);
    expect(JSON.parse(await r.fold(COUNT, [0]))).toEqual({ calls: 10 });
    expect(r.running).toBe(1);
  });

  it('runs two folds at once on two threads, and no more threads than its size', async () => {
    const r = readers(2);
    const answers = await Promise.all([r.fold(SLOW, []), r.fold(COUNT, [0]), r.fold(COUNT, [5])]);
    expect(r.running).toBe(2);
    expect(answers.map((a) => JSON.parse(a))).toEqual([{ i: 3_000_000 }, { calls: 10 }, { calls: 5 }]);
  });

  it('stops its threads after idleMs without work, and starts one again on the next fold', async () => {
    const r = readers(2, 200);
    expect(r.running).toBe(0);
    await r.fold(COUNT, [0]);
    expect(r.running).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(r.running).toBe(0);
    expect(JSON.parse(await r.fold(COUNT, [9]))).toEqual({ calls: 1 });
    expect(r.running).toBe(1);
  });

  it('holds the process open while a fold is in flight, and not once its threads are idle', () => {
    // A script that awaits a fold and prints it: with the threads unref'd it exited before the answer came.
    const script = join(dir, 'await-fold.mts');
    const source = fileURLToPath(new URL('../../../src/modules/analysis/analytics-readers.ts', import.meta.url));
    writeFileSync(
      script,
      `import { AnalyticsReaders } from ${JSON.stringify(source)};
       const r = new AnalyticsReaders(${JSON.stringify(file)});
       console.log(await r.fold(${JSON.stringify(COUNT)}, [3]));`,
    );
    const printed = execFileSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(printed)).toEqual({ calls: 7 });
  });

  it('on close, a fold in flight is rejected and later ones are refused', async () => {
    const r = readers();
    const inFlight = r.fold(SLOW, []);
    const settled = inFlight.then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await r.close();
    expect(await settled).toMatch(/the analytics reader stopped/);
    await expect(r.fold(COUNT, [0])).rejects.toThrow(/closed/);
    expect(r.running).toBe(0);
  });
});
