// Running and stopping the server as a self-hoster does: `npm start` and
// SIGTERM, start-up problems as one line with exit code 2, the key checks
// that refuse a database's wrong master key, and the files' permissions.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, type Server, createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError, waitForPostgres } from '../src/startup.js';
import { canListen, freePort } from './support/ports.js';

const dirs: string[] = [];
const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-start-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The parent's environment without the test run's database (start-up tests use SQLite unless they say otherwise). */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _db, NODE_ENV: _env, ...parent } = process.env;
  return { ...parent, LOG_LEVEL: 'info', ...extra };
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Spawns a server and resolves once it logs that it listens (rejects if it exits first). */
async function startServer(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Running> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (text.includes('Server listening')) resolve();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${text}`)));
  });
  return { child, output: () => text, exited };
}

// The server as `npm start` runs it: the bundle its prestart step builds (scripts/build-if-stale.mjs), built once
// here if the sources changed. Through tsx each start compiled the sources again: 15 starts took 202 s of this file
// on Node.js 20 beside the real-time calls (CI, 7 Dec).
const serverMain = ['dist/server.js'];
beforeAll(() => {
  const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
}, 300_000);

/** Runs the built server to its end (for start-ups that must fail). */
function runMain(env: Record<string, string>) {
  return spawnSync(process.execPath, serverMain, {
    env: baseEnv({ DATA_DIR: newDataDir(), PORT: '0', ...env }),
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** The failure is one line (after any retry notices), without a stack trace. */
function expectOneLineFailure(result: ReturnType<typeof runMain>, pattern: RegExp) {
  expect(result.status, result.stderr + result.stdout).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(pattern);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe('npm start', () => {
  it('ends on SIGTERM to the process it started: the port is free within 5 s and nothing is left serving', {
    timeout: 180_000,
  }, async () => {
    const port = await freePort();
    const server = await startServer(
      'npm',
      ['start', '--silent'],
      baseEnv({ PORT: String(port), DATA_DIR: newDataDir() }),
    );
    const health = await fetch(`http://127.0.0.1:${port}/api/health`);
    expect(health.status).toBe(200);

    server.child.kill('SIGTERM');
    await server.exited;
    let free = false;
    for (const deadline = Date.now() + 5000; !free && Date.now() < deadline; ) {
      free = await canListen(port);
      if (!free) await sleep(100);
    }
    expect(free, server.output()).toBe(true);
    expect(server.output()).toContain('SIGTERM: finishing in-flight requests');

    // dist/ is now current: the next start does not compile again.
    const prestart = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { encoding: 'utf8' });
    expect(prestart.status).toBe(0);
    expect(prestart.stderr).not.toContain('building');
  });
});

// Each test starts a server (slow under a loaded CI, where the real-time calls run beside this file), so the default
// 30 s is too short.
describe('start-up problems: one line, exit code 2', { timeout: 90_000 }, () => {
  it('names a busy port', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const result = runMain({ PORT: String((busy.address() as AddressInfo).port) });
      expectOneLineFailure(result, /^port \d+ on 127\.0\.0\.1 is already in use \(PORT\)/);
    } finally {
      busy.close();
    }
  });

  it('names an invalid LOG_LEVEL', () => {
    const result = runMain({ LOG_LEVEL: 'loud' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    );
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('names a HOST that does not resolve', () => {
    expectOneLineFailure(
      runMain({ HOST: 'no-such-host.invalid' }),
      /^HOST "no-such-host\.invalid" does not resolve to an address$/,
    );
  });

  it('retries an unreachable database, then names it (without its password) and the timeout', async () => {
    const port = await freePort();
    const result = runMain({
      DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/app`,
      MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
      JWT_SECRET: 'j'.repeat(40),
      DATABASE_CONNECT_TIMEOUT_SECONDS: '1',
    });
    expectOneLineFailure(
      result,
      /^cannot reach the database at postgres:\/\/app:\*\*\*@127\.0\.0\.1:\d+\/app \(DATABASE_URL\): connection refused; gave up after 1 s \(DATABASE_CONNECT_TIMEOUT_SECONDS\)$/,
    );
    expect(result.stderr).toContain('database not reachable yet (connection refused); retrying');
    expect(result.stderr).not.toContain('s3cret');
  });

  it.runIf(process.env.DATABASE_URL)('refuses wrong database credentials at once', () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.password = 'wrong-password';
    const result = runMain({
      DATABASE_URL: url.toString(),
      MASTER_KEY: Buffer.alloc(32, 7).toString('base64'),
      JWT_SECRET: 'j'.repeat(40),
    });
    expectOneLineFailure(result, /^cannot use the database at .* \(DATABASE_URL\): password authentication failed/);
    expect(result.stderr).not.toContain('retrying');
  });

  it.runIf(process.env.DATABASE_URL)('connects once a database that was down comes up', async () => {
    const target = new URL(process.env.DATABASE_URL!);
    const port = await freePort();
    const url = new URL(target);
    url.port = String(port);
    let proxy: Server | null = null;
    const retries: string[] = [];
    try {
      await waitForPostgres(url.toString(), 60_000, (problem) => {
        retries.push(problem);
        // The "database" comes up after the first refused attempt: a proxy to the real server.
        proxy ??= createServer((socket) => {
          const upstream = connect(Number(target.port || 5432), target.hostname);
          socket.pipe(upstream).pipe(socket);
          upstream.on('error', () => socket.destroy());
          socket.on('error', () => upstream.destroy());
        }).listen(port, '127.0.0.1');
      });
      expect(retries[0]).toBe('connection refused');
    } finally {
      (proxy as Server | null)?.close();
    }
  });

  it('refuses production with sandbox providers, naming only the sandboxes (not the local voice or the real Calendly)', () => {
    const result = runMain({ NODE_ENV: 'production' });
    expect(result.status, result.stderr).toBe(2);
    const [first, ...listed] = result.stderr.trim().split('\n');
    expect(first).toBe('refusing to start in production with sandbox providers (set ALLOW_SANDBOX=1 to allow):');
    expect(listed.map((line) => line.trim().split(':')[0])).toEqual([
      'sms',
      'email',
      'payments',
      'telephony',
      'connector',
      'audio',
    ]);
    for (const line of listed) expect(line).toContain('(sandbox stand-in');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it('waitForPostgres with no time to wait fails on the first refusal', async () => {
    const port = await freePort();
    await expect(waitForPostgres(`postgres://u:p@127.0.0.1:${port}/d`, 0, () => {})).rejects.toBeInstanceOf(
      StartupError,
    );
  });
});

describe('one server per SQLite data folder', () => {
  it("refuses a second server on the same DATA_DIR with one line naming the first one's pid; a killed server leaves no lock behind", {
    timeout: 120_000,
  }, async () => {
    const dir = newDataDir();
    const env = async () => baseEnv({ DATA_DIR: dir, PORT: String(await freePort()), HOST: '127.0.0.1' });
    const first = await startServer(process.execPath, serverMain, await env());
    try {
      const second = spawnSync(process.execPath, serverMain, { env: await env(), encoding: 'utf8', timeout: 60_000 });
      expectOneLineFailure(
        second,
        new RegExp(
          `^the data folder ${dir} \\(DATA_DIR\\) is in use by another server \\(pid ${first.child.pid}\\): stop it or give this one another DATA_DIR`,
        ),
      );
      expect(second.stderr.trim().split('\n')).toHaveLength(1);
      // The first one is untouched and still serves.
      expect(first.child.exitCode).toBe(null);
      const port = /"port":(\d+)|listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(first.output());
      expect(port).not.toBe(null);
      expect((await fetch(`http://127.0.0.1:${port![1] ?? port![2]}/api/health`)).status).toBe(200);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    // SIGKILL gives no chance to clean up: the operating system drops the lock with the process.
    const third = await startServer(process.execPath, serverMain, await env());
    third.child.kill('SIGTERM');
    expect(await third.exited).toBe(0);
  });
});

describe('keys and data files', () => {
  it('keeps files 0600, warns about ALLOW_SANDBOX, refuses a lost or wrong master key, and ends sessions on a new JWT secret', {
    timeout: 120_000,
  }, async () => {
    const dir = newDataDir();
    const env = (extra: Record<string, string> = {}) => baseEnv({ DATA_DIR: dir, PORT: '0', ...extra });
    const stop = async (server: Running) => {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    };

    const first = await startServer(process.execPath, serverMain, env({ NODE_ENV: 'production', ALLOW_SANDBOX: '1' }));
    expect(first.output()).toMatch(/"level":40[^\n]*ALLOW_SANDBOX=1 in production: sandbox providers/);
    for (const file of [
      'master.key',
      'jwt.secret',
      'workspace.sqlite',
      'workspace.sqlite-wal',
      'workspace.sqlite-shm',
    ]) {
      const path = join(dir, file);
      if (file.startsWith('workspace.sqlite-') && !existsSync(path)) continue;
      expect((statSync(path).mode & 0o777).toString(8), file).toBe('600');
    }
    expect(statSync(join(dir, 'workspace.sqlite')).mode & 0o777).toBe(0o600);
    await stop(first);

    const key = readFileSync(join(dir, 'master.key'), 'utf8');
    renameSync(join(dir, 'master.key'), join(dir, 'master.key.bak'));
    const lost = spawnSync(process.execPath, serverMain, { env: env(), encoding: 'utf8', timeout: 60_000 });
    expectOneLineFailure(
      lost,
      /master\.key is missing, but this database was set up with a master key: restore master\.key from your backup/,
    );
    expect(existsSync(join(dir, 'master.key'))).toBe(false);

    writeFileSync(join(dir, 'master.key'), `${Buffer.alloc(32, 1).toString('base64')}\n`, { mode: 0o600 });
    const wrong = spawnSync(process.execPath, serverMain, { env: env(), encoding: 'utf8', timeout: 60_000 });
    expectOneLineFailure(
      wrong,
      /^the master key \(MASTER_KEY or DATA_DIR\/master\.key\) is not the one this database was set up with/,
    );
    const wrongEnv = spawnSync(process.execPath, serverMain, {
      env: env({ MASTER_KEY: Buffer.alloc(32, 2).toString('base64') }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expectOneLineFailure(wrongEnv, /is not the one this database was set up with/);

    writeFileSync(join(dir, 'master.key'), key);
    writeFileSync(join(dir, 'jwt.secret'), `${'n'.repeat(48)}\n`);
    const restored = await startServer(process.execPath, serverMain, env());
    expect(restored.output()).toContain('JWT_SECRET differs from the previous start: every existing session has ended');
    await stop(restored);
  });
});

describe.skipIf(!process.env.DATABASE_URL)(
  'instances sharing one PostgreSQL database (PostgreSQL only: skipped without DATABASE_URL)',
  () => {
    it('refuses a different JWT_SECRET with one line and exit code 2; JWT_SECRET_ROTATE=1 changes it for all, and says what is true', {
      timeout: 180_000,
    }, async () => {
      const schema = `jwt_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      try {
        const url = new URL(process.env.DATABASE_URL!);
        url.searchParams.set('options', `-c search_path=${schema}`);
        const shared = { DATABASE_URL: url.toString(), MASTER_KEY: Buffer.alloc(32, 9).toString('base64') };
        const first = 'a'.repeat(40);
        const second = 'b'.repeat(40);
        const env = (extra: Record<string, string>) =>
          baseEnv({ DATA_DIR: newDataDir(), PORT: '0', ...shared, ...extra });

        const running = await startServer(process.execPath, serverMain, env({ JWT_SECRET: first }));
        const other = spawnSync(process.execPath, serverMain, {
          env: env({ JWT_SECRET: second }),
          encoding: 'utf8',
          timeout: 60_000,
        });
        expectOneLineFailure(
          other,
          /^JWT_SECRET is not the one this database was last used with: every instance on one database must share it/,
        );
        expect(other.stdout + other.stderr).not.toContain('every existing session has ended');
        running.child.kill('SIGTERM');
        expect(await running.exited).toBe(0);

        const rotated = await startServer(
          process.execPath,
          serverMain,
          env({ JWT_SECRET: second, JWT_SECRET_ROTATE: '1' }),
        );
        expect(rotated.output()).toContain(
          'JWT_SECRET changed (JWT_SECRET_ROTATE=1): sessions signed with the old secret are no longer accepted',
        );
        expect(rotated.output()).not.toContain('every existing session has ended');
        rotated.child.kill('SIGTERM');
        expect(await rotated.exited).toBe(0);

        // The old secret is now the stranger.
        expectOneLineFailure(
          spawnSync(process.execPath, serverMain, {
            env: env({ JWT_SECRET: first }),
            encoding: 'utf8',
            timeout: 60_000,
          }),
          /^JWT_SECRET is not the one this database was last used with/,
        );
        const again = await startServer(process.execPath, serverMain, env({ JWT_SECRET: second }));
        expect(again.output()).not.toContain('JWT_SECRET');
        again.child.kill('SIGTERM');
        expect(await again.exited).toBe(0);
      } finally {
        await admin.query(`drop schema ${schema} cascade`);
        await admin.end();
      }
    });
  },
);
