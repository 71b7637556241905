// The guides' walkthroughs run as written: pasted in order into one shell
// (test/support/guides.ts), from the project folder, against a server started
// as `npm start` starts it, twice on the same data, and they answer what the
// guides show. The port comes from the one BASE line of the first guide.
// test-files: realtime (it waits on calls: .ci/run and npm test run it beside the rest)
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { walkthroughScript } from './support/guides.js';
import { freePort } from './support/ports.js';

describe('the guides walkthroughs, pasted into one shell against a running server', () => {
  // Against `npm start` with its defaults, as the guides say: SQLite. The PostgreSQL run of the suite would only repeat it.
  it.skipIf(process.env.DATABASE_URL)(
    'run as written, twice on the same data, and answer what the guides show',
    { timeout: 900_000 },
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const dataDir = mkdtempSync(join(tmpdir(), 'wsapi-guides-data-'));
      // "From the project folder": a folder that sees its node_modules, sdk/, scripts/ and package.json.
      const folder = mkdtempSync(join(tmpdir(), 'wsapi-guides-'));
      for (const entry of ['node_modules', 'sdk', 'scripts']) symlinkSync(resolve(entry), join(folder, entry));
      copyFileSync('package.json', join(folder, 'package.json'));
      const { DATABASE_URL: _db, NODE_ENV: _env, ...parent } = process.env;
      // As `npm start` with the defaults, except outbound calls: the timer stand-in ends them in seconds instead of a
      // minute of simulated speech. The inbound call of real-calls.md and the web call of web-calls.md still talk.
      const server = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...parent, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SANDBOX_CALLS: 'timer' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let serverErrors = '';
      server.stderr?.on('data', (chunk) => {
        serverErrors += chunk;
      });
      try {
        let up = false;
        for (let i = 0; i < 240 && !up && server.exitCode === null; i += 1) {
          up = await fetch(`${base}/api/health`).then(
            (r) => r.ok,
            () => false,
          );
          if (!up) await sleep(500);
        }
        expect({ up, serverErrors }).toMatchObject({ up: true });
        const script = walkthroughScript(base);
        // No `set -e`: event streams end by their --max-time (curl exit 28), as when pasted; the answers below are the check.
        const run = () => spawnSync('bash', ['-c', script], { cwd: folder, encoding: 'utf8', timeout: 420_000 });
        for (const round of [1, 2]) {
          const result = run();
          const problems = result.stderr.split('\n').filter((line) => line.trim() && !line.startsWith('npm warn'));
          expect({ round, status: result.status, problems }).toEqual({ round, status: 0, problems: [] });
          const out = result.stdout;
          // accounts, data
          expect(out).toContain('"status":"ok","auth":{');
          expect(out).toContain('contacts calls agents');
          expect(out).toMatch(/decrypted: \{"name":"Grace Hopper"/);
          // telephony, billing
          expect(out).toContain('["sandbox"]');
          expect(out).toContain('"status":"delivered"');
          expect(out).toContain('{"amount":4.99,"currency":"usd"}');
          expect(out).toContain('Pay $20.00');
          expect(out).toContain('$20.00 added to your balance');
          expect(out).toContain('{"amount":24.99,"currency":"usd"}');
          // personas, integrations, knowledge, connectors
          expect(readFileSync(join(folder, 'amy.wav')).subarray(0, 4).toString()).toBe('RIFF');
          expect(out).toContain('"accessToken":"my-c…oken"');
          expect(out).toMatch(/(^|\])204$/m); // the integration deleted (after the listing, which ends without a newline)
          expect(out).toContain(`"url":"${base}/api/openapi.json"`);
          expect(out).toContain('"reason":"10.0.0.1 is not a public address"');
          expect(out).toMatch(/x-objects-written: 5/i);
          // call sessions, webhooks: every status verified by the standardwebhooks receiver, a forgery refused
          expect(out).toMatch(/^queued\nringing\nin_progress\ncompleted$/m);
          expect(out).toMatch(
            /verified call_status [0-9a-f-]{36} queued\n(.*\n)*verified call_status [0-9a-f-]{36} completed/,
          );
          expect(out).toMatch(/^400$/m);
          // temporary calls: waited for the end, then the summary email
          expect(out).toMatch(/completed\n\[\{"id":"[^"]+","channel":"email".*Your test call/);
          // real calls: the scripted walk, then an inbound call to your own number, its record and recording
          expect(out).toContain(`7. open ${base}/console/calls/`);
          expect(out).toMatch(/^1$/m); // the Front desk configuration keeps the number attached
          expect(out).toContain('"direction":"inbound"');
          expect(out).toContain('200 audio/wav');
          expect(readFileSync(join(folder, 'inbound.wav')).subarray(0, 4).toString()).toBe('RIFF');
          // web calls: the console demo's account, a web call started, and playWavCall's conversation
          expect(out).toMatch(/"url":"ws:\/\/127\.0\.0\.1:\d+\/api\/media\/web\?token=/);
          expect(out).toMatch(/^agent: /m);
          expect(readFileSync(join(folder, 'agent.wav')).subarray(0, 4).toString()).toBe('RIFF');
          // pathways: valid, a broken copy's errors, an inbound sandbox call walking it, the webhook node verified
          expect(out).toContain('{"valid":true,"warnings":[]}');
          expect(out).toContain('{"path":"/edges/3/to","message":"no node has id');
          expect(out).toContain('  [shipped] agent: Good news: order 4217 has shipped. Goodbye!');
          expect(out).toContain('path: greet -> lookup (by /edges/0) -> shipped (by /edges/1)');
          expect(out).toContain('variables: {"order_number":4217,"order_status":"shipped"}');
          expect(out).toContain('verified lookup: order 4217 is shipped');
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
