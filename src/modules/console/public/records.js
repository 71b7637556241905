// Records of the account's encrypted stores (agents, conversational-pathways):
// each is an object whose content is AES-256-GCM under a store key the account
// may read (GET /api/keys/{id}); the console opens (and writes) them in the
// browser with WebCrypto. Where WebCrypto is missing (a page not served over https or from
// localhost) or a record does not open, openRecord answers null and the page
// shows the record by its id.
import { api } from './common.js';

const hexBytes = (hex) => new Uint8Array((hex.match(/../g) ?? []).map((pair) => parseInt(pair, 16)));

/** The record's JSON value, or null when it cannot be opened here. `keys` caches imported keys between records. */
export async function openRecord(object, keys = new Map()) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle || !object.keyId) return null;
  let key = keys.get(object.keyId);
  if (!key) {
    key = api(`/api/keys/${encodeURIComponent(object.keyId)}`).then(async ({ data }) => ({
      cryptoKey: await subtle.importKey('raw', hexBytes(data.key), { name: 'AES-GCM' }, false, ['decrypt']),
      iv: data.iv,
    }));
    keys.set(object.keyId, key);
  }
  try {
    const { cryptoKey, iv } = await key;
    const sealed = new Uint8Array([...hexBytes(object.content), ...hexBytes(object.auth_tag)]);
    const plain = await subtle.decrypt(
      { name: 'AES-GCM', iv: hexBytes(object.iv ?? iv), tagLength: 128 },
      cryptoKey,
      sealed,
    );
    return JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
}

/** Up to `limit` records of one of the root's stores, oldest first: `{ object, value }` (value null: not readable here). */
export async function listStore(storeName, limit = 200) {
  const { data: root } = await api('/api/root');
  const store = root.stores?.[storeName];
  if (!store) return [];
  const { data: objects } = await api(`/api/objects/${encodeURIComponent(store.id)}/related?limit=${limit}`);
  const keys = new Map();
  return Promise.all(objects.map(async (object) => ({ object, value: await openRecord(object, keys) })));
}

/** One record by its object id: `{ object, value }`; a 404 is thrown as the ApiError it is. */
export async function readRecord(id) {
  const { data: object } = await api(`/api/objects/${encodeURIComponent(id)}`);
  return { object, value: await openRecord(object) };
}

const base64 = (bytes) => btoa(String.fromCharCode(...bytes));

/**
 * Writes `value` as a record of `storeName`, AES-256-GCM under the store's
 * key with a fresh IV: a new record, or (`id` and `version`) the record
 * replaced only if still at that version (412 otherwise). The stored object.
 */
export async function writeRecord(storeName, value, { id, version } = {}) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new Error('WebCrypto is not available here (the console needs https or localhost to encrypt)');
  const { data: root } = await api('/api/root');
  const store = root.stores?.[storeName];
  if (!store) throw new Error(`the account has no ${storeName} store`);
  const { data: key } = await api(`/api/keys/${encodeURIComponent(store.keyId)}`);
  const cryptoKey = await subtle.importKey('raw', hexBytes(key.key), { name: 'AES-GCM' }, false, ['encrypt']);
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await subtle.encrypt(
      { name: 'AES-GCM', iv, tagLength: 128 },
      cryptoKey,
      new TextEncoder().encode(JSON.stringify(value)),
    ),
  );
  // WebCrypto appends the 16-byte tag; the API keeps it apart.
  const body = {
    keyId: store.keyId,
    content: base64(sealed.subarray(0, sealed.length - 16)),
    authTag: base64(sealed.subarray(sealed.length - 16)),
    iv: base64(iv),
  };
  if (id === undefined)
    return (await api('/api/objects', { method: 'PUT', body: { ...body, relatedId: store.id } })).data;
  return (
    await api(`/api/objects/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      body,
      headers: version === undefined ? {} : { 'if-match': String(version) },
    })
  ).data;
}
