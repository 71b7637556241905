// The pathways guide's walkthrough runs as written, in a shell and against a
// server of its own (it signs up its own account: test/support/guides.ts,
// STANDALONE_GUIDES), twice on the same data, and answers what the guide shows.
// test-files: realtime (it waits on a call: .ci/run and npm test run it beside the rest)
import { describe, expect, it } from 'vitest';
import { pasteStandaloneGuide } from './support/guide-server.js';

describe('the pathways guide walkthrough, pasted into a shell of its own', () => {
  // Against `npm start` with its defaults, as the guide says: SQLite.
  it.skipIf(process.env.DATABASE_URL)(
    'runs as written, twice on the same data: valid, a broken copy refused, an inbound call walking it',
    { timeout: 600_000 },
    async () => {
      await pasteStandaloneGuide('pathways', (out) => {
        expect(out).toContain('{"valid":true,"warnings":[]}');
        expect(out).toContain('{"path":"/edges/3/to","message":"no node has id');
        expect(out).toContain('  [shipped] agent: Good news: order 4217 has shipped. Goodbye!');
        expect(out).toContain('path: greet -> lookup (by /edges/0) -> shipped (by /edges/1)');
        expect(out).toContain('variables: {"order_number":4217,"order_status":"shipped"}');
        // the webhook node's request, its signature verified by the guide's standardwebhooks receiver
        expect(out).toContain('verified lookup: order 4217 is shipped');
      });
    },
  );
});
