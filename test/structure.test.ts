// The layout DESIGN.md "Layout" promises, checked on the source itself: no
// module under src/modules/ reaches the composition root (src/services.ts) or
// any create-services.ts (an area's own wiring is for the composition root,
// and one area's create-services building another's would hide an edge of the
// dependency order), no import circle exists in src/ (type-only imports and
// `import('…')` types count too), the composition builds in dependency order
// with nothing assigned or subscribed after construction (areas subscribe to
// one another's events in their own create-services), and a table named in
// ONE_WRITER is written by its one store only.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * Every module specifier a file names: import and export-from (type-only too),
 * side-effect imports, import-equals, import() calls and import('…') types.
 * (The installed TypeScript 7 has no JavaScript parser API, so a careful scan:
 * a static import or export starts a line and runs to its `from '…'` without
 * a quote or semicolon in between; a quote inside a multi-line import list, in
 * a comment say, would hide that import.)
 */
export function moduleSpecifiers(file: string, text = readFileSync(file, 'utf8')): string[] {
  const patterns = [
    /^[ \t]*(?:import|export)\b[^'";]*?\bfrom\s*(['"])([^'"\n]+)\1/gm,
    /^[ \t]*import\s*(['"])([^'"\n]+)\1/gm,
    /\bimport\(\s*(['"])([^'"\n]+)\1\s*\)/g,
    /\brequire\(\s*(['"])([^'"\n]+)\1\s*\)/g,
  ];
  const found: Array<{ at: number; specifier: string }> = [];
  for (const pattern of patterns)
    for (const match of text.matchAll(pattern)) found.push({ at: match.index, specifier: match[2]! });
  return found.sort((a, b) => a.at - b.at).map((f) => f.specifier);
}

/** The src/ file a relative specifier names ('./x.js' → x.ts), or null for packages and node: modules. */
function resolveLocal(from: string, specifier: string, known: Set<string>): string | null {
  if (!specifier.startsWith('.')) return null;
  const target = resolve(dirname(from), specifier);
  for (const candidate of [
    target.replace(/\.js$/, '.ts'),
    target.replace(/\.mjs$/, '.mts'),
    `${target}.ts`,
    join(target, 'index.ts'),
    target,
  ]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** The import graph of src/: file → the src/ files it imports. */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(src);
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      moduleSpecifiers(file)
        .map((s) => resolveLocal(file, s, known))
        .filter((f): f is string => f !== null),
    ]),
  );
}

/** Every strongly connected component of more than one file (or a file importing itself), each as a readable circle. */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative enough for a few hundred files.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (file: string) => {
    indexOf.set(file, index);
    low.set(file, index);
    index++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!indexOf.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, indexOf.get(next)!));
      }
    }
    if (low.get(file) === indexOf.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) components.push(component);
    }
  };
  for (const file of graph.keys()) if (!indexOf.has(file)) connect(file);
  // Show each component as one concrete circle: a shortest path back to its first file.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...component].sort()[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const next of graph.get(file) ?? []) {
        if (!members.has(next)) continue;
        if (next === start) {
          const path = [file];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return [...path, start].map((f) => relative(root, f));
        }
        if (!previous.has(next)) {
          previous.set(next, file);
          queue.push(next);
        }
      }
    }
    return component.map((f) => relative(root, f));
  });
}

/** Tables written by one store only (issue 45 "one store per table"); the others may read them. */
const ONE_WRITER: Record<string, string> = {
  call_sessions: 'src/modules/calls/store.ts',
  users: 'src/modules/auth/store.ts',
  api_keys: 'src/modules/api-keys/store.ts',
  events: 'src/modules/events/recorder.ts',
};
/** A ONE_WRITER table written elsewhere too, by one statement that also writes its own table, and why. */
const ONE_STATEMENT_WRITERS: Record<string, string> = {
  'src/modules/data/objects-store.ts writes events':
    'on PostgreSQL a batch of objects and their object_created events is one statement: the event insert reads the rows the object insert returned, so no object means no event',
};

/** The tables a source text inserts into, updates or deletes from (Kysely calls or SQL). */
export function writtenTables(text: string): string[] {
  const patterns = [
    /\b(?:insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*['"`]([a-z_]+)/g,
    /\b(?:update|insert\s+(?:or\s+\w+\s+)?into|delete\s+from|replace\s+into|merge\s+into)\s+([a-z_]+)\b/gi,
  ];
  return [...new Set(patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]!.toLowerCase())))];
}

/**
 * What the composition patches after building it: property assignments
 * (`a.b = …`, `a.b ??= …`), listeners added (`x.onFinished(…)`) and hooks
 * bound (`connect(…)`, `bind…(…)` on a built object).
 */
export function patchesAfterConstruction(text: string): string[] {
  const patterns = [
    /^[ \t]*[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\[[^\]\n]+\])+\s*(?:=(?![=>])|\?\?=|\|\|=|&&=)/gm,
    /\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\??\.(?:on[A-Z]\w*|bind[A-Z]\w*|connect)\??\.?\(/g,
  ];
  return patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[0].trim()));
}

/** The composition's files: the root, the app that registers it, housekeeping's tasks. */
const COMPOSITION = ['src/services.ts', 'src/app.ts', 'src/housekeeping.ts'];

describe('source layout', () => {
  it('finds every kind of import, type-only ones included', () => {
    const specifiers = moduleSpecifiers(
      'x.ts',
      [
        "import a from './a.js';",
        "import type { B } from './b.js';",
        'export type { C } from "./c.js";',
        "export * from './d.js';",
        "const e = await import('./e.js');",
        "let f: import('./f.js').F;",
        "import g = require('./g.js');",
        'import {\n  type H,\n  h,\n} from "./h.js";',
        "import './i.js';",
        "export const j = 'from';",
        "export { k } from './k.js';",
      ].join('\n'),
    );
    expect(specifiers).toEqual([
      './a.js',
      './b.js',
      './c.js',
      './d.js',
      './e.js',
      './f.js',
      './g.js',
      './h.js',
      './i.js',
      './k.js',
    ]);
  });

  it('reports a circle, and none in a line', () => {
    const [a, b, c] = [join(root, 'a.ts'), join(root, 'b.ts'), join(root, 'c.ts')];
    expect(
      importCycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    expect(
      importCycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, []],
        ]),
      ),
    ).toEqual([]);
  });

  it('no area module imports the composition root or any create-services file', () => {
    const offenders = sourceFiles(join(src, 'modules')).flatMap((file) =>
      moduleSpecifiers(file)
        .filter((specifier) => /services\.js$/.test(specifier))
        .map((specifier) => `${relative(root, file)} imports ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('finds an assignment or a subscription after construction', () => {
    expect(
      patchesAfterConstruction(
        [
          'providers.audio = carrier;',
          '  services.voice.runner ??= runner;',
          "calls['x'] = 1;",
          'billing.events.onItemStatus((change) => telephony.numbers.followSubscription(change));',
          'calls.calls.onFinished(async (session) => {});',
          'audio.connect?.(handler);',
          'voice.runner.bindReporter(report);',
          'const audio = carrier.carrier ?? providers.audio;',
          'if (a.b === c) return;',
          'const f = (x) => x.y;',
        ].join('\n'),
      ),
    ).toEqual([
      'providers.audio =',
      'services.voice.runner ??=',
      "calls['x'] =",
      'billing.events.onItemStatus(',
      'calls.calls.onFinished(',
      'audio.connect?.(',
      'voice.runner.bindReporter(',
    ]);
  });

  it('builds the composition in dependency order: nothing assigned or subscribed after construction', () => {
    const offenders = COMPOSITION.flatMap((path) =>
      patchesAfterConstruction(readFileSync(join(root, path), 'utf8')).map((patch) => `${path}: ${patch}`),
    );
    expect(offenders).toEqual([]);
  });

  it('finds a table written through Kysely or SQL', () => {
    expect(
      writtenTables(
        [
          "db.updateTable('call_sessions').set({})",
          'db.insertInto("jobs").values(row)',
          "db.deleteFrom('call_progress as p')",
          'sql`update call_charges as c set x = 1`',
          'sql`insert into events (id) values (1)`',
          'sql`delete from  users where id = 1`',
          "db.selectFrom('campaigns')",
        ].join('\n'),
      ).sort(),
    ).toEqual(['call_charges', 'call_progress', 'call_sessions', 'events', 'jobs', 'users']);
  });

  it('writes each ONE_WRITER table from its one store only (analysis, analytics and temporary sessions read call_sessions)', () => {
    const offenders = sourceFiles(src)
      .filter((file) => !file.includes(`${join('src', 'db', 'migrations')}`))
      .flatMap((file) => {
        const path = relative(root, file);
        return writtenTables(readFileSync(file, 'utf8'))
          .filter((table) => ONE_WRITER[table] !== undefined && ONE_WRITER[table] !== path)
          .map((table) => `${path} writes ${table}`)
          .filter((offence) => ONE_STATEMENT_WRITERS[offence] === undefined);
      });
    expect(offenders).toEqual([]);
  });

  it('has no import circle in src/ (type-only imports count)', () => {
    const cycles = importCycles(importGraph()).map((cycle) => cycle.join(' → '));
    expect(cycles).toEqual([]);
  });
});
