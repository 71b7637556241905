// Helpers shared by the data-plane tests: authenticated requests, AES-256-GCM
// with node:crypto, and the event rows a user's actions wrote.
import { createCipheriv, randomBytes } from 'node:crypto';
import type { TestApp } from '../../support/app.js';
import { bearer, type TestUser } from '../../support/factories.js';

type Method = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';

export function client(t: TestApp, user: TestUser) {
  const call = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url,
      headers: { ...bearer(user.token), ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    get: (url: string) => call('GET', url),
    put: (url: string, payload: unknown) => call('PUT', url, payload),
    post: (url: string, payload: unknown) => call('POST', url, payload),
    patch: (url: string, payload: unknown, headers?: Record<string, string>) => call('PATCH', url, payload, headers),
    del: (url: string) => call('DELETE', url),
  };
}

export type Client = ReturnType<typeof client>;

/** A fresh store key bound to the service's current server; returns its id. */
export async function createKey(api: Client): Promise<string> {
  const server = (await api.get('/api/server')).json().current;
  const res = await api.put('/api/keys', { server });
  if (res.statusCode !== 200) throw new Error(`key creation failed: ${res.statusCode} ${res.body}`);
  return res.json().id;
}

/** AES-256-GCM with a fresh 12-byte iv; everything base64 as the API takes it. */
export function encrypt(keyHex: string, plaintext: string) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
  const content = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return {
    content: content.toString('base64'),
    authTag: cipher.getAuthTag().toString('base64'),
    iv: iv.toString('base64'),
  };
}

/** A well-formed object body with random bytes standing in for ciphertext. */
export function sampleObject(keyId: string, extra: Record<string, unknown> = {}) {
  return {
    keyId,
    content: randomBytes(24).toString('base64'),
    authTag: randomBytes(16).toString('base64'),
    iv: randomBytes(12).toString('base64'),
    ...extra,
  };
}

export async function createObject(api: Client, keyId: string, extra: Record<string, unknown> = {}) {
  const res = await api.put('/api/objects', sampleObject(keyId, extra));
  if (res.statusCode !== 200) throw new Error(`object creation failed: ${res.statusCode} ${res.body}`);
  return res.json() as { id: string; version: number; relatedId: string | null; keyId: string };
}

/** The user's event rows, oldest first, with the payload parsed. */
export async function eventsOf(t: TestApp, userId: string, type?: string) {
  let q = t.database.db.selectFrom('events').selectAll().where('user_id', '=', userId).orderBy('id', 'asc');
  if (type) q = q.where('type', '=', type);
  const rows = await q.execute();
  return rows.map((r) => ({ type: r.type, payload: JSON.parse(r.payload) as Record<string, any> }));
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
