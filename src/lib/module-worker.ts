// Starts a worker thread on one of our modules, from wherever the server
// runs: built (dist/, and the bundle, where each file keeps its own
// import.meta.url), the worker is the compiled .js beside the file that asks;
// from the TypeScript sources (tests, `npm run dev`) it is the .ts, loaded
// through tsx's loader registered in the worker first.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `name` without its extension (`extract-worker`), beside `here` (the asking file's import.meta.url). */
export function startModuleWorker(here: string, name: string, options: WorkerOptions = {}): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), options);
  const entry = new URL(`./${name}.ts`, here).href;
  const tsx = pathToFileURL(
    createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
