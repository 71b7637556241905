// Prints the test files whose outcome can depend on the database, one per line,
// for the PostgreSQL pass of .ci/run. A file depends on the database when it, or
// a test/ module it imports (transitively), builds an app or a database
// (createTestApp, loadConfig, openDatabase), reads the environment (DATABASE_URL
// or process.env, e.g. to hand it to a spawned server) or spawns a process.
// Every other file (codecs, parsers, provider adapters against local fakes,
// the voice pipeline on an injected clock) runs only in the SQLite pass: it
// would run the same code twice. `--independent` prints the others instead.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const marker = /createTestApp|DATABASE_URL|process\.env|loadConfig|openDatabase|createDatabase|spawn\(|fork\(|exec(File)?(Sync)?\(/;
const memo = new Map();

function dependsOnDatabase(file, seen = new Set()) {
  if (memo.has(file)) return memo.get(file);
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let result = marker.test(text);
  for (const match of result ? [] : text.matchAll(/from\s+'(\.[^']+)'/g)) {
    const imported = resolve(dirname(file), match[1]).replace(/\.js$/, '.ts');
    if (!imported.startsWith(`${root}/test/`) || !existsSync(imported)) continue;
    if (dependsOnDatabase(imported, seen)) { result = true; break; }
  }
  memo.set(file, result);
  return result;
}

const files = execSync("find test -name '*.test.ts' | sort", { cwd: root }).toString().trim().split('\n');
const wantIndependent = process.argv.includes('--independent');
for (const file of files) {
  if (dependsOnDatabase(resolve(root, file)) !== wantIndependent) console.log(relative(root, resolve(root, file)));
}
