#!/usr/bin/env node
// workspace-agent-test: runs an account's agent tests on a Workspace API server
// (DESIGN.md "Agent tests") and exits non-zero when one fails, for CI.
//
//   npx workspace-agent-test --url https://api.example.com --key wsk_... [--junit report.xml] [--test ID]... [--timeout 600]
//
// Prints one line per test (PASS, FAIL with each failed check's expected and
// actual value, ERROR with why it could not run). Exit codes: 0 every test
// passed; 1 a test failed or could not run; 2 the command was used wrongly or
// the server could not be asked (unreachable, key refused, no tests, timeout).
// WORKSPACE_URL and WORKSPACE_API_KEY stand in for --url and --key.
// Plain JavaScript with no dependencies (Node 20+: fetch), so it runs as it is.
import { writeFile } from 'node:fs/promises';

const USAGE =
  'usage: workspace-agent-test --url URL --key API_KEY [--junit FILE] [--test TEST_ID]... [--timeout SECONDS]';

class UsageError extends Error {}

function parseArgs(argv) {
  const options = {
    url: process.env.WORKSPACE_URL,
    key: process.env.WORKSPACE_API_KEY,
    junit: null,
    tests: [],
    timeoutSeconds: 600,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s) : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${name} needs a value`);
      return v;
    };
    if (name === '--url') options.url = value();
    else if (name === '--key') options.key = value();
    else if (name === '--junit') options.junit = value();
    else if (name === '--test') options.tests.push(value());
    else if (name === '--timeout') options.timeoutSeconds = Number(value());
    else if (name === '--help' || name === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new UsageError(`unknown argument ${arg}`);
  }
  if (!options.url) throw new UsageError('--url is required');
  if (!options.key) throw new UsageError('--key is required');
  if (!Number.isFinite(options.timeoutSeconds) || options.timeoutSeconds <= 0)
    throw new UsageError('--timeout must be a number of seconds');
  return options;
}

function client(base, key) {
  const root = base.replace(/\/+$/, '');
  return async (method, path, { body, accept = 'application/json' } = {}) => {
    let res;
    try {
      res = await fetch(`${root}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          accept,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (error) {
      throw new UsageError(`cannot reach ${root}: ${error.cause?.message ?? error.message}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = JSON.parse(text).message ?? text;
      } catch {}
      throw new UsageError(`${method} ${path}: ${res.status} ${message}`);
    }
    return accept === 'application/json' ? JSON.parse(text) : text;
  };
}

const show = (value) => JSON.stringify(value ?? null);

function lineOf(result) {
  const ms = result.durationMs === null || result.durationMs === undefined ? '' : ` (${result.durationMs} ms)`;
  if (result.status === 'passed') return `PASS  ${result.name}${ms}`;
  if (result.status === 'error') return `ERROR ${result.name}: ${result.error ?? 'the test could not run'}`;
  const failed = result.checks.filter((c) => !c.passed);
  return `FAIL  ${result.name}${ms}\n${failed.map((c) => `      ${c.name}: expected ${show(c.expected)}, actual ${show(c.actual)}`).join('\n')}`;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const api = client(options.url, options.key);
  const { runId } = await api('POST', '/api/agent-tests/runs', {
    body: options.tests.length ? { testIds: options.tests } : {},
  });
  const deadline = Date.now() + options.timeoutSeconds * 1000;
  let run;
  for (let wait = 100; ; wait = Math.min(wait * 1.5, 2000)) {
    run = await api('GET', `/api/agent-tests/runs/${encodeURIComponent(runId)}`);
    if (run.status !== 'queued' && run.status !== 'running') break;
    if (Date.now() > deadline) throw new UsageError(`run ${runId} did not end within ${options.timeoutSeconds} s`);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  for (const result of run.results) process.stdout.write(`${lineOf(result)}\n`);
  const { total, passed, failed, error } = run.summary;
  process.stdout.write(`${passed} of ${total} passed, ${failed} failed, ${error} could not run (run ${runId})\n`);
  if (options.junit) {
    const xml = await api('GET', `/api/agent-tests/runs/${encodeURIComponent(runId)}`, { accept: 'application/xml' });
    await writeFile(options.junit, xml);
  }
  return run.status === 'passed' ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(
      `workspace-agent-test: ${error.message}${error instanceof UsageError && /required|unknown|needs/.test(error.message) ? `\n${USAGE}` : ''}\n`,
    );
    process.exit(2);
  },
);
