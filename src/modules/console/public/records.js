// Records of the account's encrypted stores (agents, conversational-pathways):
// each is an object whose content is AES-256-GCM under a store key the account
// may read (GET /api/keys/{id}); the console opens them in the browser with
// WebCrypto. Where WebCrypto is missing (a page not served over https or from
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
