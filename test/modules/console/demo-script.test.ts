// scripts/console-demo.mjs, the README's second command: against a running
// server in sandbox mode it makes an account that can sign in to the console
// at once (phone verified), with an agent in the encrypted agents store that
// uses a knowledge base holding the opening hours.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListeningApp, startServer } from '../../sdk/support.js';
import { bearer } from '../../support/factories.js';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/console-demo.mjs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('scripts/console-demo.mjs', () => {
  let server: ListeningApp;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('makes an account that signs in, with an agent "Amy" using a knowledge base with the opening hours', async () => {
    const { code, stdout, stderr } = await run([server.baseUrl]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`Open ${server.baseUrl}/console and sign in:`);
    const email = /email\s+(\S+)/.exec(stdout)![1]!;
    const password = /password\s+(\S+)/.exec(stdout)![1]!;
    const { t } = server;

    const login = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
    expect(login.json().status).toBe('ok');
    const { token, auth } = login.json();
    const root = (await t.app.inject({ method: 'GET', url: '/api/root', headers: bearer(token) })).json();
    const agents = (
      await t.app.inject({
        method: 'GET',
        url: `/api/objects/${root.stores.agents.id}/related`,
        headers: bearer(token),
      })
    ).json();
    expect(agents).toHaveLength(1);
    const record = JSON.parse((await t.services.data.records.read(auth.id, 'agents', agents[0].id)).toString('utf8'));
    expect(record).toMatchObject({ name: 'Amy', knowledgeBaseId: expect.any(String) });
    const search = await t.app.inject({
      method: 'POST',
      url: `/api/knowledge-bases/${record.knowledgeBaseId}/search`,
      headers: bearer(token),
      payload: { text: 'opening hours' },
    });
    expect(JSON.stringify(search.json())).toContain('Monday to Friday from nine to five');
  }, 60_000);

  it('says what to do when no server answers', async () => {
    const { code, stderr } = await run(['http://127.0.0.1:9']);
    expect(code).not.toBe(0);
    expect(stderr).toContain('start the server first with npm start');
  });
});
