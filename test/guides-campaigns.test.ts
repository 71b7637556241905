// The campaigns guide's walkthrough runs as written, in a shell and against a
// server of its own (it signs up its own account: test/support/guides.ts,
// STANDALONE_GUIDES), twice on the same data, and answers what the guide shows.
// test-files: realtime (it waits on calls: .ci/run and npm test run it beside the rest)
import { describe, expect, it } from 'vitest';
import { pasteStandaloneGuide } from './support/guide-server.js';

describe('the campaigns guide walkthrough, pasted into a shell of its own', () => {
  // Against `npm start` with its defaults, as the guide says: SQLite.
  it.skipIf(process.env.DATABASE_URL)(
    'runs as written, twice on the same data: every contact ends as the guide shows',
    { timeout: 600_000 },
    async () => {
      await pasteStandaloneGuide('campaigns', (out) => {
        expect(out).toMatch(/"status":"draft"/);
        expect(out).toMatch(/^completed \{/m);
        expect(out).toContain('Grace: completed (completed)');
        expect(out).toContain('Busy Bee: busy (busy, busy)');
        expect(out).toContain('Machine: voicemail (voicemail)');
        expect(out).toContain('Opt Out: opted_out (opted_out)');
        expect(out).toContain('Listed: do_not_call ()');
        expect(out).toMatch(
          /"phone":"\+14155550004"[^}]*"source":"opt_out"|"source":"opt_out"[^}]*"phone":"\+14155550004"/,
        );
      });
    },
  );
});
