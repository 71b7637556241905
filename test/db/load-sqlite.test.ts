// better-sqlite3 12 for Node 20, 13 (Node-API, the alias better-sqlite3-napi) for Node 22 and later:
// the choice per version, the driver this very Node loads, and the one-line error when it cannot load.
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { loadSqlite, requireDriver, sqliteDriverFor, sqliteDriverPath } from '../../src/db/load-sqlite.js';
import { StartupError } from '../../src/startup.js';

const require = createRequire(import.meta.url);

describe('sqliteDriverFor', () => {
  it('picks better-sqlite3 12 on Node 20 and 13 (better-sqlite3-napi) on Node 22, 24 and later', () => {
    for (const version of ['20.19.0', '20.20.2', 'v20.19.6'])
      expect(sqliteDriverFor(version), version).toEqual({ package: 'better-sqlite3', major: 12 });
    for (const version of ['22.12.0', 'v22.23.3', '24.0.0', '24.21.0', '26.1.0'])
      expect(sqliteDriverFor(version), version).toEqual({ package: 'better-sqlite3-napi', major: 13 });
  });

  it('refuses what is not a version', () => {
    expect(() => sqliteDriverFor('lts')).toThrow(/not a Node.js version/);
  });
});

describe('the driver on this Node.js', () => {
  const chosen = sqliteDriverFor(process.versions.node);

  it(`is the chosen one, installed with the chosen major version (Node ${process.versions.node})`, () => {
    expect(loadSqlite()).toBe(require(chosen.package));
    const installed = require(`${chosen.package}/package.json`) as { name: string; version: string };
    expect(installed.name).toBe('better-sqlite3');
    expect(Number.parseInt(installed.version, 10)).toBe(chosen.major);
    // The checkpointer's worker thread requires the same file.
    expect(sqliteDriverPath()).toBe(require.resolve(chosen.package));
    expect(sqliteDriverPath()).toContain(`${sep}node_modules${sep}${chosen.package}${sep}`);
  });

  it('opens a database, runs statements and frees them (better-sqlite3 12 aborts the process here on Node 24)', () => {
    const db = new (loadSqlite())(':memory:');
    db.exec('create table t (x integer)');
    const insert = db.prepare('insert into t values (?)');
    for (let i = 0; i < 100; i++) insert.run(i);
    expect(db.prepare('select count(*) as n, sum(x) as s from t').get()).toEqual({ n: 100, s: 4950 });
    for (let i = 0; i < 200; i++) db.prepare(`select ${i} as v`).get();
    db.close();
    // Collect the statements now (their destructors are where 12 aborts on Node 24), not at some later point.
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    expect(db.open).toBe(false);
  });
});

describe('requireDriver', () => {
  it('turns a driver that cannot load into one StartupError line saying what to do', () => {
    // better-sqlite3 12 requires fine and fails on the first open when its binary was built for another Node.js.
    const builtForAnotherNode = () =>
      class {
        constructor() {
          const err = new Error(
            "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 127.",
          );
          throw Object.assign(err, { code: 'ERR_DLOPEN_FAILED' });
        }
      };
    const attempt = () => requireDriver({ package: 'better-sqlite3', major: 12 }, '20.19.0', builtForAnotherNode);
    expect(attempt).toThrow(StartupError);
    expect(attempt).toThrow(
      "cannot load the SQLite driver better-sqlite3 (better-sqlite3 12, the one for Node.js 20.19.0): The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115. This version of Node.js requires NODE_MODULE_VERSION 127; run npm ci (or npm install) with this Node.js, or npm rebuild better-sqlite3 after changing Node.js versions",
    );
  });

  it('names the alias when 13 is missing (installed without it)', () => {
    const missing = (id: string) => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
    };
    expect(() => requireDriver({ package: 'better-sqlite3-napi', major: 13 }, '24.21.0', missing)).toThrow(
      /^cannot load the SQLite driver better-sqlite3-napi \(better-sqlite3 13, the one for Node.js 24.21.0\): Cannot find module 'better-sqlite3-napi'; run npm ci/,
    );
  });

  // The real thing: node_modules was installed by Node 20 (this machine, CI), so better-sqlite3 12 is built for it.
  it.skipIf(sqliteDriverFor(process.versions.node).major !== 13)(
    'on Node 22 and later, 12 (built by the Node 20 install) fails to open: that one-line error, not a crash',
    () => {
      expect(() => requireDriver({ package: 'better-sqlite3', major: 12 }, process.versions.node)).toThrow(
        /^cannot load the SQLite driver better-sqlite3 \(better-sqlite3 12, the one for Node.js [\d.]+\): The module '.*better_sqlite3\.node' was compiled against a different Node.js version using NODE_MODULE_VERSION \d+\. This version of Node.js requires NODE_MODULE_VERSION \d+\. .*; run npm ci/,
      );
    },
  );
});
