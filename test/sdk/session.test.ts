// The SDK keeps its session where the host says (memory, localStorage, an
// adapter) and announces changes; encrypt and decrypt accept each other's
// output; an unreachable server is a typed error naming the URL.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DecryptionError,
  type TokenStorage,
  WorkspaceClient,
  WorkspaceNetworkError,
  decrypt,
  decryptJson,
  decryptText,
  encrypt,
  encryptJson,
  memoryStorage,
  payloadToStored,
} from '../../sdk/src/index.js';
import { type ListeningApp, startServer } from './support.js';
import { createVerifiedUser } from '../support/factories.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A storage adapter that records what it was asked to do. */
function recordingStorage(): TokenStorage & { writes: Array<[string, string | null]> } {
  const inner = memoryStorage();
  const writes: Array<[string, string | null]> = [];
  return {
    writes,
    getItem: (key) => inner.getItem(key),
    setItem: (key, value) => {
      writes.push([key, value]);
      inner.setItem(key, value);
    },
    removeItem: (key) => {
      writes.push([key, null]);
      inner.removeItem(key);
    },
  };
}

describe('session storage', () => {
  it('stores the token of a sign-in, hands it to a client started later, and clears it on logout', async () => {
    const user = await createVerifiedUser(server.t);
    const storage = recordingStorage();
    const first = new WorkspaceClient({ baseUrl: server.baseUrl, storage });
    const seen: Array<string | null> = [];
    const stop = first.onTokenChange((token) => seen.push(token));
    const session = await first.auth.login({ email: user.email, password: user.password });
    expect(seen).toEqual([session.token]);
    expect(storage.getItem('workspace-api.token')).toBe(session.token);

    // A page reload: a new client on the same storage is signed in.
    const second = new WorkspaceClient({ baseUrl: server.baseUrl, storage });
    expect(second.token).toBe(session.token);
    expect((await second.auth.status()).status).toBe('ok');

    await second.auth.logout();
    expect(storage.getItem('workspace-api.token')).toBeNull();
    stop();
    first.token = 'ignored-by-stopped-listener';
    expect(seen).toEqual([session.token]);
  });

  it('uses localStorage when the host has one, under a key of your choice', () => {
    const fake = memoryStorage();
    const global = globalThis as { localStorage?: TokenStorage };
    global.localStorage = fake;
    try {
      const client = new WorkspaceClient({ baseUrl: server.baseUrl, storageKey: 'my-app.session' });
      client.token = 'abc';
      expect(fake.getItem('my-app.session')).toBe('abc');
      expect(new WorkspaceClient({ baseUrl: server.baseUrl, storageKey: 'my-app.session' }).token).toBe('abc');
      // memoryStorage() keeps a client out of localStorage.
      const isolated = new WorkspaceClient({
        baseUrl: server.baseUrl,
        storageKey: 'my-app.session',
        storage: memoryStorage(),
      });
      expect(isolated.token).toBeNull();
    } finally {
      delete global.localStorage;
    }
  });

  it('keeps in memory by default outside browsers, and never stores a token given to the constructor', () => {
    const storage = recordingStorage();
    const client = new WorkspaceClient({ baseUrl: server.baseUrl, apiKey: 'wsk_example', storage });
    expect(client.token).toBe('wsk_example');
    expect(storage.writes).toEqual([]);
    const a = new WorkspaceClient({ baseUrl: server.baseUrl });
    a.token = 'one';
    expect(new WorkspaceClient({ baseUrl: server.baseUrl }).token).toBeNull();
  });

  it('keeps calling the other listeners when one throws', () => {
    const client = new WorkspaceClient({ baseUrl: server.baseUrl, storage: memoryStorage() });
    const seen: Array<string | null> = [];
    client.onTokenChange(() => {
      throw new Error('listener bug');
    });
    client.onTokenChange((token) => seen.push(token));
    client.token = 't1';
    client.token = null;
    expect(seen).toEqual(['t1', null]);
  });
});

describe('encrypt and decrypt', () => {
  const key = randomBytes(32).toString('hex');

  it('accept each other’s output, as well as the service’s hex read form', async () => {
    const sealed = await encrypt(key, 'hello');
    expect(new TextDecoder().decode(await decrypt(key, sealed))).toBe('hello');
    expect(await decryptText(key, sealed)).toBe('hello');
    expect(await decryptJson(key, await encryptJson(key, { n: 1, s: 'x' }))).toEqual({ n: 1, s: 'x' });
    expect(await decryptText(key, payloadToStored(sealed))).toBe('hello');
  });

  it('still refuse an altered payload or another key', async () => {
    const sealed = await encrypt(key, 'hello');
    const tag = Buffer.from(sealed.authTag, 'base64');
    tag[0] ^= 1;
    await expect(decrypt(key, { ...sealed, authTag: tag.toString('base64') })).rejects.toBeInstanceOf(DecryptionError);
    await expect(decrypt(randomBytes(32).toString('hex'), sealed)).rejects.toBeInstanceOf(DecryptionError);
    await expect(decrypt(key, { ...sealed, iv: '%%%' })).rejects.toBeInstanceOf(DecryptionError);
  });
});

describe('an unreachable server', () => {
  it('is a WorkspaceNetworkError naming the URL, not a bare TypeError', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const client = new WorkspaceClient({ baseUrl: `http://127.0.0.1:${port}`, storage: memoryStorage() });
    const error = await client.auth.status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkspaceNetworkError);
    const network = error as WorkspaceNetworkError;
    expect(network.url).toBe(`http://127.0.0.1:${port}/api/auth`);
    expect(network.code).toBe('network_error');
    expect(network.message).toBe(`cannot reach http://127.0.0.1:${port}/api/auth: ECONNREFUSED`);
  });

  it('leaves an aborted request an AbortError', async () => {
    const client = new WorkspaceClient({ baseUrl: server.baseUrl, storage: memoryStorage() });
    const controller = new AbortController();
    controller.abort();
    const error = await client.http
      .request('get', '/api/health', { signal: controller.signal } as never)
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
  });
});

describe('sdk/dist', () => {
  it('is ignored by git', () => {
    const result = spawnSync('git', ['check-ignore', '-q', 'sdk/dist/index.js']);
    expect(result.status).toBe(0);
  });
});
