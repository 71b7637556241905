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
//   --realtime-workers  instead of files: how many of the real-time files
//                   (of the chosen ones) run at once, at most REALTIME_WORKERS.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const databaseMarker =
  /createTestApp|DATABASE_URL|process\.env|loadConfig|openDatabase|createDatabase|spawn\(|fork\(|exec(File)?(Sync)?\(/;
const realtimeMarker = /WallClock|test-files: realtime/;
// The real-time files run at most this many at once (.ci/run and `npm test`
// both ask --realtime-workers): all 26 at once on PostgreSQL timed out on 2
// cores (paced calls, each with its pool and its speech), 13 held.
const REALTIME_WORKERS = 13;

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

const args = process.argv.slice(2);
const databaseMemo = new Map();
const realtimeMemo = new Map();
const files = execSync("find test -name '*.test.ts' | sort", { cwd: root })
  .toString()
  .trim()
  .split('\n')
  .map((f) => resolve(root, f));
const chosen = [];
for (const file of files) {
  if (args.includes('--database') && !reaches(file, databaseMarker, databaseMemo)) continue;
  const realtime = reaches(file, realtimeMarker, realtimeMemo);
  if ((args.includes('--realtime') || args.includes('--realtime-workers')) && !realtime) continue;
  if (args.includes('--not-realtime') && realtime) continue;
  chosen.push(relative(root, file));
}
if (args.includes('--realtime-workers')) console.log(Math.max(1, Math.min(chosen.length, REALTIME_WORKERS)));
else for (const file of chosen) console.log(file);
