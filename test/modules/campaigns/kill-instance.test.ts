// kill -9 of one of two server processes in the middle of a campaign (real
// processes, real PostgreSQL, the sandbox carrier's callees talking at real
// pace): the killed instance's calls end `instance_stopped` through the
// orphan handling of the instance left, its claims go back within a minute,
// the retry policy dials those contacts again, every contact ends in a final
// status, and no contact is ever dialled twice at once.
// test-files: realtime
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { freePort } from '../../support/ports.js';
import { canSpeak, sandboxNumber } from '../calls/sandbox-support.js';

interface Server {
  child: ChildProcess;
  base: string;
  output: () => string;
  dir: string;
}

async function startServer(t: TestApp): Promise<Server> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wsapi-campaign-instance-'));
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set('options', `-c search_path=${t.pgSchema}`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dir,
      DATABASE_URL: url.toString(),
      MASTER_KEY: t.secrets.masterKey.toString('base64'),
      JWT_SECRET: t.secrets.jwtSecret,
      SANDBOX_CALLS: 'voice',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const base = `http://127.0.0.1:${port}`;
  await vi.waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited: ${text}`);
      const res = await fetch(`${base}/api/health`);
      expect(res.status).toBe(200);
    },
    { timeout: 60_000, interval: 200 },
  );
  return { child, base, output: () => text, dir };
}

describe.runIf(process.env.DATABASE_URL && canSpeak)('kill -9 of one instance mid-campaign', () => {
  let t: TestApp;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    // The test app migrates the schema and makes the account; the two servers are the instances.
    t = await createTestApp();
    [a, b] = await Promise.all([startServer(t), startServer(t)]);
  }, 120_000);
  afterAll(async () => {
    for (const s of [a, b]) {
      if (!s) continue;
      if (s.child.exitCode === null && s.child.signalCode === null) {
        s.child.kill('SIGTERM');
        await new Promise((r) => s.child.once('exit', r));
      }
      rmSync(s.dir, { recursive: true, force: true });
    }
    await t?.close();
  }, 60_000);

  it('leaves nothing half done and dials no contact twice at once', async () => {
    const user = await createFundedUser(t, 20);
    const numberId = await sandboxNumber(t, user);
    const script = ['Hello?', 'Yes, that is fine, thank you.', 'Goodbye.'];
    const contacts = Array.from({ length: 8 }, (_, i) => ({
      name: `C${i}`,
      phone: `+1415557${String(1000 + i).padStart(4, '0')}`,
      fields: { sandboxScript: script },
    }));
    const api = (server: Server, method: string, path: string, body?: unknown) =>
      fetch(`${server.base}${path}`, {
        method,
        headers: { ...bearer(user.token), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const created = await api(a, 'POST', '/api/campaigns', {
      name: 'Survives',
      agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
      fromNumberIds: [numberId],
      contacts,
      pacing: { callsPerMinute: 60, maxConcurrent: 4 },
      retry: { maxAttempts: 3, delayMinutes: 0 },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await api(a, 'POST', `/api/campaigns/${id}/start`)).status).toBe(200);

    // Once calls are under way on both instances, instance A is killed.
    const sessions = () =>
      t.database.db
        .selectFrom('call_sessions')
        .select(['id', 'status', 'outcome', 'media_instance', 'created_at', 'updated_at', 'finished_at'])
        .where('campaign_id', '=', id)
        .execute();
    await vi.waitFor(
      async () => {
        const live = (await sessions()).filter((s) => s.status === 'in_progress' && s.media_instance);
        expect(new Set(live.map((s) => s.media_instance)).size).toBeGreaterThanOrEqual(2);
      },
      { timeout: 90_000, interval: 250 },
    );
    a.child.kill('SIGKILL');
    await new Promise((r) => a.child.once('exit', r));

    await vi.waitFor(
      async () => {
        const view = (await (await api(b, 'GET', `/api/campaigns/${id}`)).json()) as { status: string };
        expect(view.status).toBe('completed');
      },
      { timeout: 240_000, interval: 1000 },
    );
    const all = await sessions();
    // A's calls ended instance_stopped (and were tried again); every call has ended and been accounted for.
    expect(all.filter((s) => s.outcome === 'instance_stopped').length).toBeGreaterThanOrEqual(1);
    expect(all.every((s) => s.finished_at !== null)).toBe(true);
    const items = (
      (await (await api(b, 'GET', `/api/campaigns/${id}/contacts`)).json()) as {
        items: Array<{ status: string; attempts: Array<{ sessionId: string }> }>;
      }
    ).items;
    expect(items.every((c) => !['pending', 'calling'].includes(c.status))).toBe(true);
    expect(items.filter((c) => c.status === 'completed').length).toBe(8);
    // No contact had two calls at once: each attempt began after the one before had ended.
    const byId = new Map(all.map((s) => [s.id, s]));
    for (const contact of items) {
      const calls = contact.attempts
        .map((x) => byId.get(x.sessionId)!)
        .sort((x, y) => Number(x.created_at) - Number(y.created_at));
      for (let i = 1; i < calls.length; i++)
        expect(Number(calls[i]!.created_at)).toBeGreaterThanOrEqual(Number(calls[i - 1]!.updated_at));
    }
  }, 420_000);
});
