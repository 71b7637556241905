// The CI command against a real server on a real socket: its exit codes
// (0 every test passed, 1 one failed, 2 misuse or a server that refuses), its
// one line per test, and the JUnit XML it writes, read by a JUnit parser.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, type TestSuites } from 'junit2json';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, type TestUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';

const CLI = join(import.meta.dirname, '../../../sdk/bin/workspace-agent-test.mjs');

let t: TestApp;
let url: string;
let user: TestUser;
let key: string;
const dir = mkdtempSync(join(tmpdir(), 'agent-test-cli-'));

beforeAll(async () => {
  t = await createTestApp();
  const port = await freePort();
  await t.app.listen({ port, host: '127.0.0.1' });
  url = `http://127.0.0.1:${port}`;
  user = await createVerifiedUser(t);
  const res = await t.app.inject({
    method: 'PUT',
    url: '/api/api-keys',
    headers: bearer(user.token),
    payload: { name: 'ci' },
  });
  key = res.json().key;
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function addTest(body: Record<string, unknown>) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/agent-tests',
    headers: bearer(user.token),
    payload: body,
  });
  expect(res.statusCode).toBe(201);
  return res.json().id as string;
}

const amy = { name: 'Amy', firstMessage: 'Hello, this is Amy. How can I help?' };

describe('workspace-agent-test', () => {
  it('exits 2 on misuse, a refused key, an unreachable server and an account with no tests', async () => {
    const noKey = await cli(['--url', url]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/--key is required\nusage:/);
    const refused = await cli(['--url', url, '--key', 'wsk_not-a-key']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/401/);
    const away = await cli(['--url', `http://127.0.0.1:${await freePort()}`, '--key', key]);
    expect(away.code).toBe(2);
    expect(away.stderr).toMatch(/cannot reach/);
    const none = await cli(['--url', url, '--key', key]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no agent test to run/);
  });

  it('exits 0 when every test passes, one line each, and writes a JUnit report a parser reads', async () => {
    await addTest({
      name: 'greets',
      agent: amy,
      caller: { lines: ['Hello, who is this?'] },
      expect: { says: ['this is Amy'] },
    });
    await addTest({
      name: 'says goodbye',
      agent: amy,
      caller: { lines: ['Goodbye'] },
      expect: { toolCalls: [{ name: 'end_call' }], outcome: 'completed' },
    });
    const report = join(dir, 'pass.xml');
    const run = await cli(['--url', url, '--key', key, '--junit', report]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^PASS {2}greets \(\d+ ms\)\nPASS {2}says goodbye \(\d+ ms\)\n2 of 2 passed, 0 failed, 0 could not run \(run [0-9a-f-]+\)\n$/,
    );
    const parsed = (await parse(readFileSync(report, 'utf8'))) as TestSuites;
    expect(parsed).toMatchObject({ tests: 2, failures: 0, errors: 0 });
    expect(parsed.testsuite![0]!.testcase!.map((c) => [c.name, c.failure, c.error])).toEqual([
      ['greets', undefined, undefined],
      ['says goodbye', undefined, undefined],
    ]);
  });

  it('exits 1 when a test fails, printing the failed check expected against actual, also in the report', async () => {
    await addTest({
      name: 'quotes a price',
      agent: amy,
      caller: { lines: ['hello'] },
      expect: { says: ['costs $20'] },
    });
    const report = join(dir, 'fail.xml');
    const run = await cli(['--url', url, '--key', key, '--junit', report]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('FAIL  quotes a price');
    expect(run.stdout).toMatch(
      / {6}says\[0\]: expected "costs \$20", actual \["Hello, this is Amy\. How can I help\?"/,
    );
    expect(run.stdout).toContain('2 of 3 passed, 1 failed');
    const parsed = (await parse(readFileSync(report, 'utf8'))) as TestSuites;
    expect(parsed).toMatchObject({ tests: 3, failures: 1 });
    const failing = parsed.testsuite![0]!.testcase!.find((c) => c.name === 'quotes a price')!;
    expect(failing.failure![0]!.message).toBe('1 of 1 checks failed: says[0]');
    expect(failing.failure![0]!.inner).toContain('says[0]: expected "costs $20"');

    // Only the tests named: the passing one alone exits 0.
    const tests = (await t.app.inject({ url: '/api/agent-tests', headers: bearer(user.token) })).json() as Array<{
      id: string;
      name: string;
    }>;
    const greets = tests.find((x) => x.name === 'greets')!.id;
    expect((await cli(['--url', url, '--key', key, '--test', greets])).code).toBe(0);
  });
});
