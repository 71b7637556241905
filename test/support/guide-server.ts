// A server started as `npm start` starts it, with a project folder beside it,
// for the guides' walkthroughs (test/guides*.test.ts): each test file starts
// its own, so the guides that stand alone run side by side with the ones that
// continue one shell.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { walkthroughScript } from './guides.js';
import { freePort } from './ports.js';

export interface ShellResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface GuideServer {
  base: string;
  /** "The project folder": it sees the checkout's node_modules, sdk/, scripts/ and package.json. */
  folder: string;
  /** Whether /api/health answered before the server gave up or exited, and what it wrote to stderr. */
  up: boolean;
  serverErrors: () => string;
  /** Pastes the script into a fresh bash in the project folder (no `set -e`, as when pasted). */
  paste: (script: string, env?: Record<string, string>) => Promise<ShellResult>;
  stop: () => Promise<void>;
}

/**
 * What went wrong in a pasted script: its exit status and the lines of its stderr (npm's warnings aside), and,
 * when there are any, the end of what it printed (to see where). `{ status: 0, problems: [] }` when all went well.
 */
export function outcomeOf(result: ShellResult) {
  const problems = result.stderr.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
  const ok = result.status === 0 && problems.length === 0;
  return { status: result.status, problems, ...(ok ? {} : { printed: result.stdout.slice(-4000).split('\n') }) };
}

/** Starts the server as `npm start` with its defaults (SQLite in a fresh DATA_DIR), `env` besides. */
export async function startGuideServer(port: number, env: Record<string, string> = {}): Promise<GuideServer> {
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'wsapi-guides-data-'));
  const folder = mkdtempSync(join(tmpdir(), 'wsapi-guides-'));
  for (const entry of ['node_modules', 'sdk', 'scripts']) symlinkSync(resolve(entry), join(folder, entry));
  copyFileSync('package.json', join(folder, 'package.json'));
  const { DATABASE_URL: _db, NODE_ENV: _env, ...parent } = process.env;
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...parent, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let serverErrors = '';
  server.stderr?.on('data', (chunk) => {
    serverErrors += chunk;
  });
  let up = false;
  for (let i = 0; i < 240 && !up && server.exitCode === null; i += 1) {
    up = await fetch(`${base}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (!up) await sleep(500);
  }
  const paste = (script: string, env: Record<string, string> = {}) =>
    new Promise<ShellResult>((done, fail) => {
      const shell = spawn('bash', ['-c', script], {
        cwd: folder,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      shell.stdout.on('data', (chunk) => out.push(chunk));
      shell.stderr.on('data', (chunk) => err.push(chunk));
      const timer = setTimeout(() => shell.kill('SIGKILL'), 420_000);
      shell.once('error', fail);
      shell.once('close', (status) => {
        clearTimeout(timer);
        done({ status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
      });
    });
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((done) => server.once('exit', done));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { base, folder, up, serverErrors: () => serverErrors, paste, stop };
}

/**
 * A guide that stands alone (STANDALONE_GUIDES), pasted twice on the same data into a fresh shell that has the
 * first guide's `$BASE`, against a server of its own started as `npm start` with its defaults (outbound calls
 * talk: the campaign's callees answer, are busy, a machine, or opt out); `check` sees each round's output.
 */
export async function pasteStandaloneGuide(guide: string, check: (out: string, base: string) => void): Promise<void> {
  const { base, up, serverErrors, paste, stop } = await startGuideServer(await freePort());
  try {
    expect({ up, serverErrors: serverErrors() }).toMatchObject({ up: true });
    const script = walkthroughScript(base, [guide]);
    for (const round of [1, 2]) {
      const result = await paste(script, { BASE: base });
      expect({ round, ...outcomeOf(result) }).toEqual({ round, status: 0, problems: [] });
      check(result.stdout, base);
    }
  } finally {
    await stop();
  }
}
