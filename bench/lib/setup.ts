// Set-up through the real HTTP routes (never measured): a signed-up,
// phone-verified user with an API key and a store key; objects to read back.
import { randomBytes } from 'node:crypto';

export interface BenchUser {
  jwt: string;
  apiKey: string;
  keyId: string;
}

/** One JSON request to the server under test; a status of 300 or more throws with the answer's start. */
export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
) {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

const currentServer = new Map<string, Promise<string>>();

/** A store key for the user: PUT /api/keys bound to the service's current server (GET /api/server, asked once per base). */
export async function createStoreKey(base: string, token: string): Promise<string> {
  if (!currentServer.has(base))
    currentServer.set(
      base,
      call(base, 'GET', '/api/server', { token }).then((s: { current: string }) => s.current),
    );
  const server = await currentServer.get(base)!;
  const created = await call(base, 'PUT', '/api/keys', { token, body: { server } });
  const id = typeof created === 'string' ? created : created?.id;
  if (typeof id !== 'string') throw new Error(`PUT /api/keys answered an unexpected body: ${JSON.stringify(created)}`);
  return id;
}

/** register → verify/request → code from the sandbox outbox → verify/submit → API key → store key. */
export async function createBenchUser(base: string): Promise<BenchUser> {
  const tag = randomBytes(4).readUInt32BE(0) % 10_000_000;
  const phone = `+1555${String(tag).padStart(7, '0')}`;
  const password = 'bench password 0123456789';
  const reg = await call(base, 'POST', '/api/auth/register', {
    body: {
      firstName: 'Bench',
      lastName: 'User',
      email: `bench-${tag}@bench.invalid`,
      phone,
      password,
      confirmPassword: password,
      remember: false,
    },
  });
  await call(base, 'POST', '/api/auth/verify/request', { token: reg.token });
  const outbox = await call(base, 'GET', `/api/sandbox/outbox?to=${encodeURIComponent(phone)}`);
  const code = outbox.find((m: { channel: string; data: { code?: string } }) => m.channel === 'sms' && m.data.code)
    ?.data.code;
  if (!code) throw new Error(`no verification code in the sandbox outbox for ${phone}`);
  const verified = await call(base, 'POST', '/api/auth/verify/submit', { token: reg.token, body: { code } });
  const apiKey = (await call(base, 'PUT', '/api/api-keys', { token: verified.token, body: { name: 'bench' } })).key;
  return { jwt: verified.token, apiKey, keyId: await createStoreKey(base, verified.token) };
}

/** The body of every object PUT: a 1 KiB ciphertext and a 16-byte tag. */
export function objectBody(keyId: string, size = 1024): string {
  return JSON.stringify({
    keyId,
    content: randomBytes(size).toString('base64'),
    authTag: randomBytes(16).toString('base64'),
  });
}

/** Creates `count` objects (concurrency 16) and returns their ids. */
export async function prefillObjects(base: string, token: string, body: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  let left = count;
  const worker = async () => {
    while (left-- > 0) {
      const res = await fetch(`${base}/api/objects`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      const json = (await res.json()) as { id?: string };
      if (res.status >= 300 || typeof json.id !== 'string')
        throw new Error(`PUT /api/objects answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
      ids.push(json.id);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return ids;
}

/** Runs `fn` over items with bounded concurrency, keeping order. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}
