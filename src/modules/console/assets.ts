// The console's static files (src/modules/console/public): plain HTML, CSS and
// JavaScript a newcomer can read and change without a build step. They are read
// once at start and served from memory with an ETag. The built server
// (dist/src/…) has no copy of them: it reads them from src/ beside it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
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

/** Every file of the public folder by name (flat: no sub-folders). */
export function loadConsoleAssets(dir = consolePublicDir()): Map<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  for (const name of readdirSync(dir).sort()) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(dir, name));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
}
