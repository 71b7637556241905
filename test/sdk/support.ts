// A test app on a real socket, and SDK clients signed in to it.
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { WorkspaceClient } from '../../sdk/src/index.js';
import { type TestApp, type TestAppOptions, createTestApp } from '../support/app.js';
import { type TestUser, createVerifiedUser } from '../support/factories.js';

export interface ListeningApp {
  t: TestApp;
  baseUrl: string;
  /** Server-side sockets of event streams still open, to cut them as a network failure would. */
  streamSockets: Set<Socket>;
  close(): Promise<void>;
}

export async function startServer(options: TestAppOptions = {}): Promise<ListeningApp> {
  const t = await createTestApp(options);
  const streamSockets = new Set<Socket>();
  const allSockets = new Set<Socket>();
  t.app.server.on('connection', (socket: Socket) => {
    allSockets.add(socket);
    socket.once('close', () => allSockets.delete(socket));
  });
  t.app.server.on('request', (req) => {
    if (!req.url?.startsWith('/api/events/') || req.url.startsWith('/api/events/ticket')) return;
    streamSockets.add(req.socket);
    req.socket.once('close', () => streamSockets.delete(req.socket));
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const close = async () => {
    // fetch (undici) keeps idle sockets, some never used, for 4 s: the server would wait for them.
    for (const socket of allSockets) socket.destroy();
    await t.close();
  };
  return { t, baseUrl, streamSockets, close };
}

/** A phone-verified user and an SDK client holding their session token. */
export async function verifiedClient(server: ListeningApp): Promise<{ user: TestUser; client: WorkspaceClient }> {
  const user = await createVerifiedUser(server.t);
  return { user, client: new WorkspaceClient({ baseUrl: server.baseUrl, token: user.token }) };
}

/** Rejects after ms: keeps a test that waits for an event from hanging until the suite timeout. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `npx <args>` as a newcomer would (an example script), killed after `timeoutMs`. */
export function runNpx(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', args, {
      cwd: process.cwd(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
