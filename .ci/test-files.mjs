// Prints test files, one per line, for the passes of .ci/run.
//   --database      only the files whose outcome can depend on the database (the
//                   PostgreSQL pass): the file, or a test/ module it imports
//                   (transitively), builds an app or a database (createTestApp,
//                   loadConfig, openDatabase), reads the environment (DATABASE_URL,
//                   process.env, e.g. to hand it to a spawned server) or spawns a
//                   process. The others (codecs, parsers, provider adapters against
//                   local fakes, the voice pipeline on an injected clock) would run
//                   the same code twice.
//   --realtime      only the real-time calls (they use test/support/wall-clock.ts,
//                   or say `test-files: realtime` in a comment, as the guides'
//                   walkthroughs do): they mostly wait on a paced conversation, so
//                   .ci/run and `npm test` (scripts/test.mjs) run them all at once
//                   beside the rest.
//   --not-realtime  every file but those.
//   --isolated      only the files that run each in a fresh process: the real-time
//                   calls (a call that lingers after its file would eat into the
//                   next one's pace) and the files that say `test-files: isolate`.
//                   The others share their worker's modules (vitest.config.ts
//                   imports isolatedFiles(): isolate: false), loading the app once
//                   per worker instead of once per file.
//   --realtime-workers  instead of files: how many of the real-time files
//                   (of the chosen ones) run at once, at most REALTIME_WORKERS.
// LONGEST_FIRST (vitest.config.ts's sequencer) starts the longest files first.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const databaseMarker =
  /createTestApp|DATABASE_URL|process\.env|loadConfig|openDatabase|createDatabase|spawn\(|fork\(|exec(File)?(Sync)?\(/;
const realtimeMarker = /WallClock|test-files: realtime/;
const isolateMarker = /test-files: isolate/;
// The real-time files run at most this many at once (.ci/run and `npm test`
// both ask --realtime-workers): all 26 at once on PostgreSQL timed out on 2
// cores (paced calls, each with its pool and its speech); 13 at once (beside
// the rest's 2) starved the voices until callers spoke over greetings and a
// web call missed its 120 s (project CI, 7 Dec); 2 at once took 593 s a pass.
const REALTIME_WORKERS = 6;

// The files that took longest in `npm test` (2 cores, 2026-12-07: seconds under its own load), started first in
// their group, longest first: a clean clone has no timings for vitest to order by, and it starts the largest files
// first, so the guides' shell chain (303 s) began 11 minutes in and ended the run at 16 minutes.
export const LONGEST_FIRST = [
  'test/guides.test.ts', // 303 s, real-time
  'test/http/fuzz.test.ts', // 372 s
  'test/startup.test.ts', // 263 s
  'test/modules/calls/sandbox-carrier.test.ts', // 144 s, real-time
  'test/sdk/calls.test.ts', // 89 s, real-time
  'test/providers/pocketsphinx.test.ts', // 86 s
  'test/guides-campaigns.test.ts', // 80 s, real-time
  'test/modules/console/browser.test.ts', // 81 s, real-time
  'test/modules/calls/web-calls.test.ts', // 80 s, real-time
  'test/modules/knowledge/limits.test.ts', // 68 s
  'test/modules/knowledge/isolation.test.ts', // 57 s
];

/** Whether the file or a test/ module it imports (transitively) matches. */
function reaches(file, marker, memo, seen = new Set()) {
  if (memo.has(file)) return memo.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let result = marker.test(text);
  for (const match of result ? [] : text.matchAll(/from\s+'(\.[^']+)'/g)) {
    const imported = resolve(dirname(file), match[1]).replace(/\.js$/, '.ts');
    if (!imported.startsWith(`${root}/test/`) || !existsSync(imported)) continue;
    if (reaches(imported, marker, memo, seen)) {
      result = true;
      break;
    }
  }
  memo.set(file, result);
  return result;
}

/** The test files the flags choose (the command line's, above), relative to the project folder. */
export function testFiles(flags = []) {
  const databaseMemo = new Map();
  const realtimeMemo = new Map();
  const files = execSync("find test -name '*.test.ts' | sort", { cwd: root })
    .toString()
    .trim()
    .split('\n')
    .map((f) => resolve(root, f));
  const chosen = [];
  for (const file of files) {
    if (flags.includes('--database') && !reaches(file, databaseMarker, databaseMemo)) continue;
    const realtime = reaches(file, realtimeMarker, realtimeMemo);
    if ((flags.includes('--realtime') || flags.includes('--realtime-workers')) && !realtime) continue;
    if (flags.includes('--not-realtime') && realtime) continue;
    if (flags.includes('--isolated') && !realtime && !isolateMarker.test(readFileSync(file, 'utf8'))) continue;
    chosen.push(relative(root, file));
  }
  return chosen;
}

/** The files that run each in a fresh process (--isolated). */
export const isolatedFiles = () => testFiles(['--isolated']);

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const chosen = testFiles(args);
  if (args.includes('--realtime-workers')) console.log(Math.max(1, Math.min(chosen.length, REALTIME_WORKERS)));
  else for (const file of chosen) console.log(file);
}
