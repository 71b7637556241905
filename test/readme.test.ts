// The README is for newcomers: every variable the server reads is in its
// configuration table, and its walkthroughs run as written against a server
// started as it says, twice on the same data.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';

describe('README', () => {
  it('documents every environment variable src/config.ts reads', () => {
    const config = readFileSync('src/config.ts', 'utf8');
    const readme = readFileSync('README.md', 'utf8');
    const variables = [...config.matchAll(/\b(?:opt|str|int|bool)\('([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]);
    expect(variables.length).toBeGreaterThan(20);
    expect(variables.filter((v) => !readme.includes(`\`${v}\``) && !readme.includes(` ${v}`))).toEqual([]);
  });

  it('shows the two commands', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toContain('npm install');
    expect(readme).toContain('npm start');
    expect(readme).toContain('npm test');
  });

  it('links only to files in the repository', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).not.toContain('../');
    const targets = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    expect(targets.length).toBeGreaterThan(2);
    for (const target of targets) {
      if (target.startsWith('#')) continue;
      expect(target, target).not.toMatch(/^[a-z]+:/i);
      expect(existsSync(target.split('#')[0]), target).toBe(true);
    }
  });

  it('covers running it: health, resetting data, CORS, rate limits, the master key', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const topic of [
      '/api/health',
      'rm -rf ./data',
      '## CORS',
      '## Rate limits',
      '## The master key and backups',
      'back it up',
    ])
      expect(readme).toContain(topic);
  });
});

/** The fenced blocks of one `## ` section, in order. */
function blocksOf(readme: string, title: string, lang: string): string[] {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf('\n## ', start + 4);
  return [
    ...readme.slice(start, end < 0 ? undefined : end).matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g')),
  ].map((m) => m[1]);
}

const WALKTHROUGH = [
  'Try it with curl',
  'Telephony with curl',
  'Billing and payments',
  'Personas (voice previews)',
  'Integrations (Calendly)',
  'Knowledge bases: upload and search',
  'Connector ingestion',
  'Call sessions',
  'Temporary test calls',
];

describe('README walkthroughs, pasted into a shell against a running server', () => {
  it('pastes safely: no <placeholder> the shell would read as a redirect, no eight-minute benchmark', () => {
    const readme = readFileSync('README.md', 'utf8');
    const shell = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(shell.length).toBeGreaterThan(10);
    const commands = shell.flatMap((block) => block.split('\n')).map((line) => line.replace(/(^|\s)#.*$/, ''));
    expect(commands.filter((line) => /<[A-Za-z][\w-]*>/.test(line))).toEqual([]);
    expect(commands.filter((line) => /npm run bench(?!\s+--\s+--quick)/.test(line))).toEqual([]);
  });

  // Against `npm start` with its defaults, as the README says: SQLite. The PostgreSQL run of the suite would only repeat it (three minutes).
  it.skipIf(process.env.DATABASE_URL)(
    'runs as written, twice on the same data, and answers what the README shows',
    { timeout: 900_000 },
    async () => {
      const readme = readFileSync('README.md', 'utf8');
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: p } = probe.address() as AddressInfo;
          probe.close(() => resolve(p));
        });
      });
      const base = `http://127.0.0.1:${port}`;
      const dataDir = mkdtempSync(join(tmpdir(), 'wsapi-readme-data-'));
      // The walkthrough runs "from the project folder": here a folder that sees its node_modules, sdk/ and package.json.
      const folder = mkdtempSync(join(tmpdir(), 'wsapi-readme-'));
      for (const entry of ['node_modules', 'sdk']) symlinkSync(resolve(entry), join(folder, entry));
      copyFileSync('package.json', join(folder, 'package.json'));
      const { DATABASE_URL: _db, NODE_ENV: _env, ...parent } = process.env;
      // As `npm start` with the defaults, except calls: the timer stand-in ends them in seconds instead of a minute of simulated speech.
      const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...parent, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SANDBOX_CALLS: 'timer' },
        stdio: 'ignore',
      });
      try {
        for (let i = 0; i < 240; i += 1) {
          if (
            await fetch(`${base}/api/health`).then(
              (r) => r.ok,
              () => false,
            )
          )
            break;
          await sleep(500);
        }
        const script = WALKTHROUGH.flatMap((title) => [
          `# --- ${title}`,
          ...blocksOf(readme, title, 'ts').map((ts) => `cat > call.ts <<'README_TS'\n${ts}README_TS`),
          ...blocksOf(readme, title, 'sh'),
        ])
          .join('\n')
          .replaceAll('http://127.0.0.1:3000', base);
        // No `set -e`: the event stream of "Temporary test calls" ends by its --max-time (curl exit 28), as it does when pasted; the answers below are the check.
        const run = () => spawnSync('bash', ['-c', script], { cwd: folder, encoding: 'utf8', timeout: 400_000 });
        for (const round of [1, 2]) {
          const result = run();
          const problems = result.stderr.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
          expect({ round, status: result.status, problems }).toEqual({ round, status: 0, problems: [] });
          const out = result.stdout;
          // The sample answers the README shows.
          expect(out).toContain('"status":"ok","auth":{');
          expect(out).toContain('["sandbox"]');
          expect(out).toContain('"status":"delivered"');
          expect(out).toContain('{"amount":4.99,"currency":"usd"}');
          expect(out).toContain('Pay $20.00');
          expect(out).toContain('$20.00 added to your balance');
          expect(out).toContain('{"amount":24.99,"currency":"usd"}');
          expect(out).toContain('"accessToken":"my-c…oken"');
          expect(out).toMatch(/(^|\])204$/m); // the integration deleted (after the listing, which ends without a newline)
          expect(out).toContain(`"url":"${base}/api/openapi.json"`);
          expect(out).toContain('"reason":"10.0.0.1 is not a public address"');
          expect(out).toMatch(/x-objects-written: 5/i);
          expect(out).toMatch(/^queued\nringing\nin_progress\ncompleted$/m);
          expect(out).toContain('"status":"completed"');
          expect(readFileSync(join(folder, 'amy.wav')).subarray(0, 4).toString()).toBe('RIFF');
        }
      } finally {
        server.kill('SIGTERM');
        await new Promise((done) => (server.exitCode !== null ? done(null) : server.once('exit', done)));
        rmSync(folder, { recursive: true, force: true });
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
