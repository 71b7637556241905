// The encrypted data plane (spec 4.7, 4.8): root, servers, store keys and
// objects, as the service speaks them (base64 in, hex out). The store helpers
// in store.ts build on these.
import type { Answer, Body, Query } from './api-types.js';
import { type EncryptedPayload, type StoredCiphertext, decryptJson, importKey } from './crypto.js';
import type { HttpCore } from './http.js';

export type RootObject = Answer<'/api/root', 'get'>;
export type StoreName = keyof RootObject['stores'];
export type StoredObject = Answer<'/api/objects/{id}', 'get'>;
export type ObjectInput = Body<'/api/objects', 'put'>;
export type StoreKey = Answer<'/api/keys/{id}', 'get'>;

/** The eight stores of every root (spec 1). */
export const STORE_NAMES: readonly StoreName[] = [
  'contacts',
  'calls',
  'agents',
  'tasks',
  'conversational-pathways',
  'campaigns',
  'sms-messages',
  'performance-metrics',
];

export class ServersApi {
  constructor(private readonly http: HttpCore) {}

  /** The service's current server name and public keys (SPKI and JWK). */
  current(): Promise<Answer<'/api/server', 'get'>> {
    return this.http.request('get', '/api/server', {});
  }

  list(): Promise<Answer<'/api/servers', 'get'>> {
    return this.http.request('get', '/api/servers', {});
  }

  /** mode generate answers the private key once (never stored); upload_public takes a base64url SPKI. */
  register(input: Body<'/api/servers', 'post'>): Promise<Answer<'/api/servers', 'post'>> {
    return this.http.request('post', '/api/servers', { body: input });
  }
}

/** A store key ready for use: the CryptoKey plus the key's own IV (the fallback for objects stored without one). */
export interface UsableKey {
  id: string;
  cryptoKey: CryptoKey;
  iv: string;
}

export class KeysApi {
  private readonly cache = new Map<string, Promise<UsableKey>>();

  constructor(private readonly http: HttpCore) {}

  /** Creates a store key bound to a server: random, or your own (`key` base64, 32 bytes). Answers its id. */
  create(input: Body<'/api/keys', 'put'>): Promise<Answer<'/api/keys', 'put'>> {
    return this.http.request('put', '/api/keys', { body: input });
  }

  /** The key record; `key` and `iv` are hex. */
  get(id: string): Promise<StoreKey> {
    return this.http.request('get', '/api/keys/{id}', { params: { id } });
  }

  async delete(id: string): Promise<void> {
    await this.http.request('delete', '/api/keys/{id}', { params: { id } });
    this.cache.delete(id);
  }

  /** Fetches and imports a key once per client; later calls reuse it. */
  use(id: string): Promise<UsableKey> {
    let entry = this.cache.get(id);
    if (!entry) {
      entry = this.get(id).then(async (record) => ({ id, cryptoKey: await importKey(record.key), iv: record.iv }));
      entry.catch(() => this.cache.delete(id));
      this.cache.set(id, entry);
    }
    return entry;
  }
}

/** A version for If-Match: the number you read, or the ETag as the service sent it. */
export type Version = number | string;

export class ObjectsApi {
  constructor(
    private readonly http: HttpCore,
    private readonly keys: KeysApi,
  ) {}

  /** Stores ciphertext (e.g. the output of encrypt()) under a key, optionally as a child of relatedId. */
  create(input: ObjectInput): Promise<StoredObject> {
    return this.http.request('put', '/api/objects', { body: input });
  }

  get(id: string): Promise<StoredObject> {
    return this.http.request('get', '/api/objects/{id}', { params: { id } });
  }

  /** Replaces the ciphertext; with ifMatch, only if the object is still at that version (else 412 version_mismatch). */
  update(
    id: string,
    input: Body<'/api/objects/{id}', 'patch'>,
    options: { ifMatch?: Version } = {},
  ): Promise<StoredObject> {
    const headers: Record<string, string> = {};
    if (options.ifMatch !== undefined) headers['if-match'] = String(options.ifMatch);
    return this.http.request('patch', '/api/objects/{id}', { params: { id }, body: input, headers });
  }

  /** Deletes the object and its publications; its children are detached. */
  delete(id: string): Promise<void> {
    return this.http.request('delete', '/api/objects/{id}', { params: { id } });
  }

  /** The children of an object (relatedId = id), oldest first; page with limit and after. */
  related(
    id: string,
    query: Query<'/api/objects/{id}/related', 'get'> = {},
  ): Promise<Answer<'/api/objects/{id}/related', 'get'>> {
    return this.http.request('get', '/api/objects/{id}/related', { params: { id }, query });
  }

  publish(
    type: string,
    relatedId: string,
    objectId: string,
  ): Promise<Answer<'/api/objects/publish/{type}/{relatedId}', 'put'>> {
    return this.http.request('put', '/api/objects/publish/{type}/{relatedId}', {
      params: { type, relatedId },
      body: { objectId },
    });
  }

  unpublish(type: string, relatedId: string): Promise<void> {
    return this.http.request('delete', '/api/objects/publish/{type}/{relatedId}', { params: { type, relatedId } });
  }

  /**
   * Decrypts an object (as read, or an object_created event payload) with the
   * key it names, fetched with GET /api/keys/{id} on first use.
   */
  async decrypt<T = unknown>(object: StoredCiphertext & { keyId?: string | null; key_id?: string | null }): Promise<T> {
    const keyId = object.keyId ?? object.key_id;
    if (!keyId) throw new TypeError('the object names no key');
    const key = await this.keys.use(keyId);
    return decryptJson<T>(key.cryptoKey, object, key.iv);
  }
}

/**
 * Request body for PUT /api/objects (and PATCH, without relatedId) from an
 * encrypted payload. Written field by field, not spread, so that a field the
 * route drops or renames fails the type check here.
 */
export function objectInput(keyId: string, payload: EncryptedPayload, relatedId?: string): ObjectInput {
  const body: ObjectInput = { keyId, content: payload.content, authTag: payload.authTag, iv: payload.iv };
  if (relatedId !== undefined) body.relatedId = relatedId;
  return body;
}
