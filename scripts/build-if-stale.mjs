// `npm start`'s prestart step: compiles src/ into dist/ and bundles
// dist/server.js (scripts/bundle.mjs) only when dist/ does not match the
// sources, so a start after the first one skips the ~4 s build. The stamp
// records every source file's path, size and modification time plus the
// compiler and bundler settings; any difference (an edit, a new or a deleted
// file, a checkout) rebuilds dist/ from scratch.
// Plain JavaScript: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'dist', '.build-stamp');
const inputs = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/bundle.mjs'];

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

function sourceFingerprint() {
  const hash = createHash('sha256');
  const files = [...walk(join(root, 'src')), ...inputs.map((f) => join(root, f)).filter((f) => existsSync(f))].sort();
  for (const file of files) {
    const stat = statSync(file);
    hash.update(`${relative(root, file)}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const fingerprint = sourceFingerprint();
const current =
  existsSync(stampFile) &&
  existsSync(join(root, 'dist', 'server.js')) &&
  readFileSync(stampFile, 'utf8').trim() === fingerprint;
if (!current || process.argv.includes('--force')) {
  process.stderr.write('building dist/ (sources changed since the last build)\n');
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    stdio: 'inherit',
    cwd: root,
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const bundled = spawnSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit', cwd: root });
  if (bundled.status !== 0) process.exit(bundled.status ?? 1);
  writeFileSync(stampFile, `${fingerprint}\n`);
}
