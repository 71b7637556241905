// Helpers for the connect tests: the store a job writes to, and its children decrypted with the store's key.
import { createDecipheriv } from 'node:crypto';
import type { Client } from '../data/support.js';

export interface StoreChild {
  id: string;
  keyId: string;
  relatedId: string;
  content: string;
  auth_tag: string;
  iv: string;
}

/** AES-256-GCM decryption of hex fields, as a client holding the store key does. */
export function decrypt(keyHex: string, object: { content: string; auth_tag: string; iv: string }): string {
  const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), Buffer.from(object.iv, 'hex'));
  decipher.setAuthTag(Buffer.from(object.auth_tag, 'hex'));
  return Buffer.concat([decipher.update(Buffer.from(object.content, 'hex')), decipher.final()]).toString('utf8');
}

/** A store's container id, default key id and key (hex). */
export async function storeOf(api: Client, name: string) {
  const root = (await api.get('/api/root')).json();
  const store = root.stores[name] as { id: string; keyId: string };
  const key = (await api.get(`/api/keys/${store.keyId}`)).json().key as string;
  return { ...store, key };
}

/** Every child of a store, oldest first, with its plaintext parsed. */
export async function recordsOf(api: Client, name: string) {
  const store = await storeOf(api, name);
  const children = (await api.get(`/api/objects/${store.id}/related`)).json() as StoreChild[];
  return { store, children, records: children.map((c) => JSON.parse(decrypt(store.key, c)) as Record<string, any>) };
}
