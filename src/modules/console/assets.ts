// The console's static files (src/modules/console/public): plain HTML, CSS and
// JavaScript a newcomer can read and change without a build step. They are read
// once at start and served from memory with an ETag. The built server
// (dist/src/…) has no copy of them: it reads them from src/ beside it.
// Libraries the pages use come from their installed packages (VENDOR), served
// the same way under /console/assets/: no CDN, and no copy in the repository.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ConsoleAsset {
  body: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The public folder next to this file, or in src/ when running from dist/. */
export function consolePublicDir(): string {
  const here = fileURLToPath(new URL('./public/', import.meta.url));
  if (existsSync(here)) return here;
  const fromSource = here.replace(/([\\/])dist\1src\1/, '$1src$1');
  if (existsSync(fromSource)) return fromSource;
  throw new Error(`the console's files are missing: looked in ${here} and ${fromSource}`);
}

/**
 * Served name -> [package, its ES module file]. dagre (the pathway graph's
 * layout) ships one self-contained ES module with graphlib inside; its source
 * map is not served, so the comment naming it is dropped. uPlot (the
 * analytics page's charts) is one ES module and its stylesheet.
 */
export const VENDOR: Record<string, [string, string]> = {
  'dagre.js': ['@dagrejs/dagre', 'dist/dagre.esm.js'],
  'uplot.js': ['uplot', 'dist/uPlot.esm.js'],
  'uplot.css': ['uplot', 'dist/uPlot.min.css'],
};

/** A file served from memory, with its ETag. */
export const consoleAsset = (body: Buffer, type: string): ConsoleAsset => ({
  body,
  type,
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
});

/** A vendored file's text, read from its installed package. */
function vendorFile(packageName: string, file: string): Buffer {
  const root = dirname(createRequire(import.meta.url).resolve(`${packageName}/package.json`));
  const text = readFileSync(join(root, file), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  return Buffer.from(text, 'utf8');
}

/** Every file of the public folder by name (flat: no sub-folders), and the vendored libraries. */
export function loadConsoleAssets(dir = consolePublicDir()): Map<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(dir).sort()) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    assets.set(name, consoleAsset(readFileSync(join(dir, name)), type));
  }
  for (const [name, [packageName, file]] of Object.entries(VENDOR)) {
    if (assets.has(name)) throw new Error(`the console's ${name} is both a public file and a vendored one`);
    assets.set(name, consoleAsset(vendorFile(packageName, file), TYPES[extname(name)]!));
  }
  return assets;
}
