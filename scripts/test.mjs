#!/usr/bin/env node
// `npm test`: every test file, as .ci/run runs them. The real-time calls
// (.ci/test-files.mjs --realtime: paced conversations that mostly wait) run
// many at once (--realtime-workers says how many) in one vitest process,
// beside the rest on vitest's two workers in another; their report follows
// the rest's. One after the other they took 17 minutes on 2 cores. The rest
// share their worker's modules (vitest.config.ts: isolate: false for all but
// .ci/test-files.mjs --isolated): with a fresh process per file they took
// 495 s, most of it loading the app's modules again for every file.
// With a file or filter (`npm test -- test/http/foundation.test.ts`) it is
// plain `vitest run` with those arguments.
import { execFileSync, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const vitest = resolve(root, 'node_modules/.bin/vitest');
const args = process.argv.slice(2);

/** Runs vitest; resolves to its exit code. `capture` keeps its output to print later. */
function run(vitestArgs, capture) {
  return new Promise((done) => {
    const child = spawn(vitest, ['run', ...vitestArgs], {
      cwd: root,
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    const output = [];
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
    child.on('exit', (code, signal) =>
      done({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(output).toString() }),
    );
  });
}

if (args.some((arg) => !arg.startsWith('-'))) {
  process.exitCode = (await run(args, false)).code;
} else {
  const files = (flag) =>
    execFileSync(process.execPath, [resolve(root, '.ci/test-files.mjs'), flag], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
  const realtime = files('--realtime');
  const rest = files('--not-realtime');
  const [realtimeWorkers] = files('--realtime-workers');
  const started = Date.now();
  const [calls, others] = await Promise.all([
    run([`--maxWorkers=${realtimeWorkers}`, ...args, ...realtime], true),
    run(['--maxWorkers=2', ...args, ...rest], false),
  ]);
  process.stdout.write(`\n--- the real-time calls (${realtime.length} files), run beside the rest\n${calls.output}`);
  process.stdout.write(`\nnpm test: ${Math.round((Date.now() - started) / 1000)} s in all\n`);
  process.exitCode = calls.code || others.code;
}
