// The agent tests guide's walkthrough runs as written, in a shell and against a
// server of its own (it signs up its own account: test/support/guides.ts,
// STANDALONE_GUIDES), twice on the same data, and answers what the guide shows.
// test-files: realtime (its runs are calls: .ci/run and npm test run it beside the rest)
import { describe, expect, it } from 'vitest';
import { pasteStandaloneGuide } from './support/guide-server.js';

describe('the agent tests guide walkthrough, pasted into a shell of its own', () => {
  // Against `npm start` with its defaults, as the guide says: SQLite.
  it.skipIf(process.env.DATABASE_URL)(
    'runs as written, twice on the same data: a passing run, a failing one with its checks, the CI command',
    { timeout: 600_000 },
    async () => {
      await pasteStandaloneGuide('agent-tests', (out) => {
        expect(out).toMatch(/^passed$/m);
        expect(out).toContain('agent: Hello, this is Amy from the clinic. How can I help?');
        expect(out).toMatch(/^failed$/m);
        expect(out).toContain('toolCalls[0]: expected {"name":"check_availability"}, actual ["end_call"]');
        expect(out).toContain('<?xml');
        expect(out).toMatch(/PASS {2}Amy books a meeting/);
        expect(out).toContain('1 of 1 passed, 0 failed, 0 could not run');
        expect(out).toMatch(/^exit 0$/m);
      });
    },
  );
});
