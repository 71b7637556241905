// The second step of the build (after tsc): dist/server.js, what `npm start`
// runs. It is dist/src/main.js with every file it imports statically from
// dist/src joined into one module, together with the ES-module packages they
// import (typebox, kysely, jose, …). Node loads an ES module file by file, and
// these packages are hundreds of small files each (typebox alone 373 at start):
// resolving, reading and linking them was most of the server's start-up time
// (bench/ANALYSIS.md, "Start-up: one bundle").
//
// What stays outside, loaded by Node as before:
// - CommonJS packages (fastify, pino, ajv, better-sqlite3, …): require() is
//   cheaper per file, and several find their own files through __dirname.
// - Whatever is imported dynamically (`await import(…)`): loaded when needed.
// - The files that run in worker threads and the console's static files: they
//   are found relative to the file that names them (import.meta.url), so in
//   the bundle each of our files keeps its own import.meta.url, which points
//   at its compiled copy in dist/src.
// An inlined package that uses import.meta itself would find its files
// relative to the bundle: the build fails and names it, to be kept outside.
// Plain JavaScript, like build-if-stale.mjs, which runs it.
import { readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'src', 'main.js');
const outfile = join(root, 'dist', 'server.js');

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const esmPackages = new Map();
/** Whether a package is an ES module package ("type": "module"), looked up from where it is imported. */
function isEsmPackage(name, importer) {
  const key = `${name}\0${dirname(importer)}`;
  if (esmPackages.has(key)) return esmPackages.get(key);
  let esm = false;
  for (let dir = dirname(importer); ; dir = dirname(dir)) {
    const manifest = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) {
      esm = JSON.parse(readFileSync(manifest, 'utf8')).type === 'module';
      break;
    }
    if (dirname(dir) === dir) break;
  }
  esmPackages.set(key, esm);
  return esm;
}

const ourFiles = `${sep}dist${sep}src${sep}`;

const placement = {
  name: 'workspace-bundle',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const inline = args.kind === 'import-statement' && isEsmPackage(packageName(args.path), args.importer);
      return inline ? undefined : { external: true };
    });
    b.onLoad({ filter: /\.m?js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      if (!args.path.includes(ourFiles)) {
        throw new Error(
          `${relative(root, args.path)} uses import.meta: its package cannot be inlined (scripts/bundle.mjs)`,
        );
      }
      const own = `new URL(${JSON.stringify(`./${relative(dirname(outfile), args.path).split(sep).join('/')}`)}, import.meta.url).href`;
      const contents = text.replaceAll('import.meta.url', own);
      if (contents.replaceAll(own, '').includes('import.meta'))
        throw new Error(
          `${relative(root, args.path)} uses import.meta beyond import.meta.url: teach scripts/bundle.mjs its meaning`,
        );
      return { contents, loader: 'js' };
    });
  },
};

export async function bundle() {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Readable names in stack traces; `node --enable-source-maps dist/server.js` gives their files in dist/src.
    minify: false,
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [placement],
  });
  checkOneByteSource(readFileSync(outfile, 'utf8'));
}

/**
 * V8 keeps a script's source on the heap for as long as the script lives, as a one-byte string when every character
 * is Latin-1 and as a two-byte string otherwise: one `→` in a kept comment or a `…` in a regexp literal doubled the
 * bundle's 2 MB to 4 MB of every server's heap. esbuild escapes such characters in strings but not in regexp literals
 * or the comments it keeps (tsc drops ours: removeComments in tsconfig.build.json); write them as \u escapes.
 */
export function checkOneByteSource(text) {
  const at = text.search(/[^\u0000-\u00ff]/);
  if (at < 0) return;
  const line = text.slice(0, at).split('\n').length;
  throw new Error(
    `dist/server.js line ${line} holds ${JSON.stringify(text[at])} (beyond Latin-1): the whole bundle would stay in memory at two bytes a character; write it as a \\u escape (${JSON.stringify(text.slice(Math.max(0, at - 60), at + 20))})`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await bundle();
