// The records of the account's `agents` store, for the agent picker. Records
// are encrypted (AES-256-GCM) with a store key the account may read
// (GET /api/keys/{id}); the console opens them in the browser with WebCrypto
// to show each agent's name. Where WebCrypto is missing (a page not served
// over https or from localhost) or a record does not open, the agent is still
// listed, by its id: the service reads the record itself when the call starts.
import { api } from './common.js';

const hexBytes = (hex) => new Uint8Array((hex.match(/../g) ?? []).map((pair) => parseInt(pair, 16)));

async function openRecord(object, keys) {
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
  const { cryptoKey, iv } = await key;
  const sealed = new Uint8Array([...hexBytes(object.content), ...hexBytes(object.auth_tag)]);
  const plain = await subtle.decrypt(
    { name: 'AES-GCM', iv: hexBytes(object.iv ?? iv), tagLength: 128 },
    cryptoKey,
    sealed,
  );
  return JSON.parse(new TextDecoder().decode(plain));
}

/** Up to `limit` agents of the account: `{ id, name, knowledgeBaseId?, readable }`, oldest first. */
export async function listAgents(limit = 200) {
  const { data: root } = await api('/api/root');
  const store = root.stores?.agents;
  if (!store) return [];
  const { data: objects } = await api(`/api/objects/${encodeURIComponent(store.id)}/related?limit=${limit}`);
  const keys = new Map();
  return Promise.all(
    objects.map(async (object) => {
      try {
        const record = await openRecord(object, keys);
        if (record && typeof record.name === 'string' && record.name.trim()) {
          return {
            id: object.id,
            name: record.name.trim(),
            knowledgeBaseId: typeof record.knowledgeBaseId === 'string' ? record.knowledgeBaseId : undefined,
            readable: true,
          };
        }
      } catch {
        // listed by id below
      }
      return { id: object.id, name: `Agent ${object.id.slice(0, 8)}…`, readable: false };
    }),
  );
}
