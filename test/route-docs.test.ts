// Route tables read as method, path, schemas and handler: every route's
// operationId, summary and description live in the docs file beside its
// routes (routes.ts -> routes.docs.ts, src/http/route-docs.ts), and every doc
// and example there is named by the table beside it (none left behind).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const modules = resolve(import.meta.dirname, '../src/modules');
const files = readdirSync(modules, { recursive: true, encoding: 'utf8' }).map((f) => join(modules, f));
const routeFiles = files.filter((f) => /routes\.ts$/.test(f));
const docsFiles = files.filter((f) => /routes\.docs\.ts$/.test(f));

describe('route docs beside the routes', () => {
  it('finds the route tables and their docs', () => {
    expect(routeFiles.length).toBeGreaterThan(20);
    expect(docsFiles.length).toBeGreaterThan(20);
  });

  it.each(routeFiles.map((f) => [f.slice(modules.length + 1), f]))(
    '%s names its docs instead of writing them',
    (_, file) => {
      const text = readFileSync(file, 'utf8');
      // A string written as an operation's operationId or summary belongs in the docs file.
      expect(text).not.toMatch(/\b(?:operationId|summary)\s*:\s*['"`]/);
    },
  );

  it.each(docsFiles.map((f) => [f.slice(modules.length + 1), f]))(
    '%s is all used by the routes beside it',
    async (_, file) => {
      const routes = file.replace(/\.docs\.ts$/, '.ts');
      expect(existsSync(routes)).toBe(true);
      const table = readFileSync(routes, 'utf8');
      const { docs = {}, examples = {} } = (await import(pathToFileURL(file).href)) as {
        docs?: Record<string, { operationId: string }>;
        examples?: Record<string, unknown>;
      };
      for (const [name, doc] of Object.entries(docs)) {
        expect(doc.operationId).toBe(name);
        expect(table, `docs.${name}`).toMatch(new RegExp(`\\bdocs\\.${name}\\b`));
      }
      for (const name of Object.keys(examples))
        expect(table, `examples.${name}`).toMatch(new RegExp(`\\bexamples\\.${name}\\b`));
    },
  );
});
