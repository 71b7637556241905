// The guides' walkthroughs that continue one shell (SHELL_GUIDES in
// test/support/guides.ts) run as written: pasted in order into one shell, from
// the project folder, against a server started as `npm start` starts it
// (test/support/guide-server.ts), twice on the same data, and they answer what
// the guides show. The port comes from the one BASE line of the first guide.
// The guides that stand alone run in test/guides-<guide>.test.ts, beside this.
// test-files: realtime (it waits on calls: .ci/run and npm test run it beside the rest)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outcomeOf, startGuideServer } from './support/guide-server.js';
import { SHELL_GUIDES, walkthroughScript } from './support/guides.js';
import { freePort } from './support/ports.js';

describe('the guides walkthroughs, pasted into one shell against a running server', () => {
  // Against `npm start` with its defaults, as the guides say: SQLite. The PostgreSQL run of the suite would only repeat it.
  it.skipIf(process.env.DATABASE_URL)(
    'run as written, twice on the same data, and answer what the guides show',
    { timeout: 900_000 },
    async () => {
      const { base, folder, up, serverErrors, paste, stop } = await startGuideServer(await freePort(), {
        // outbound calls on the timer stand-in: they end in seconds instead of a minute of simulated speech (the
        // inbound call of real-calls.md and the web call of web-calls.md still talk)
        SANDBOX_CALLS: 'timer',
      });
      try {
        expect({ up, serverErrors: serverErrors() }).toMatchObject({ up: true });
        const script = walkthroughScript(base, SHELL_GUIDES);
        for (const round of [1, 2]) {
          // No `set -e`: event streams end by their --max-time (curl exit 28), as when pasted; the answers below are the check.
          const result = await paste(script);
          expect({ round, ...outcomeOf(result) }).toEqual({ round, status: 0, problems: [] });
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
        }
      } finally {
        await stop();
      }
    },
  );
});
