// End-to-end encryption of object payloads with WebCrypto AES-GCM. The
// service stores ciphertext, tag and IV and never sees the key in use here
// (it hands the key to its owner through GET /api/keys/{id}).
//
// Every encryption draws a fresh random 12-byte IV: GCM loses both
// confidentiality and integrity if an IV repeats under one key, so the key's
// own `iv` is never used to encrypt; it is only a fallback for decrypting
// objects written without one.
import { type Bytes, base64ToBytes, bytesToBase64, bytesToHex, hexToBytes, utf8 } from './encoding.js';

export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** What PUT /api/objects and PATCH /api/objects/{id} take: base64, the tag separate from the ciphertext. */
export interface EncryptedPayload {
  content: string;
  authTag: string;
  iv: string;
}

/** What the service answers for an object (GET, related, object_created events): hex. */
export interface StoredCiphertext {
  content: string;
  auth_tag: string;
  iv?: string | null;
}

/** A key as the SDK accepts it: a CryptoKey, raw bytes, or the hex of GET /api/keys/{id}. */
export type KeyMaterial = CryptoKey | Uint8Array | string;

/** Decryption failed: wrong key, or ciphertext, tag or IV altered. The payload must not be trusted. */
export class DecryptionError extends Error {
  constructor(message = 'decryption failed: wrong key or the object was altered') {
    super(message);
    this.name = 'DecryptionError';
  }
}

function subtle(): SubtleCrypto {
  const value = globalThis.crypto?.subtle;
  if (!value)
    throw new Error(
      'WebCrypto (globalThis.crypto.subtle) is not available: use Node 20+ or a browser in a secure context',
    );
  return value;
}

/** Imports an AES-GCM key (16, 24 or 32 bytes; the service makes 32) from bytes or hex. */
export async function importKey(key: KeyMaterial): Promise<CryptoKey> {
  if (typeof key !== 'string' && !(key instanceof Uint8Array)) return key;
  const raw = typeof key === 'string' ? hexToBytes(key) : new Uint8Array(key);
  if (![16, 24, 32].includes(raw.length)) throw new TypeError(`an AES key is 16, 24 or 32 bytes, got ${raw.length}`);
  return subtle().importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

/** A new random AES-256 key (32 bytes), e.g. to bring your own key to PUT /api/keys (send it base64). */
export function generateKeyBytes(): Bytes {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

function toBytes(plaintext: Uint8Array | string): Bytes {
  return typeof plaintext === 'string' ? utf8.encode(plaintext) : new Uint8Array(plaintext);
}

/** Encrypts bytes or a UTF-8 string under a fresh random IV. */
export async function encrypt(key: KeyMaterial, plaintext: Uint8Array | string): Promise<EncryptedPayload> {
  const cryptoKey = await importKey(key);
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await subtle().encrypt({ name: 'AES-GCM', iv, tagLength: TAG_BYTES * 8 }, cryptoKey, toBytes(plaintext)),
  );
  // WebCrypto appends the tag to the ciphertext; the API keeps them apart.
  const cut = sealed.length - TAG_BYTES;
  return {
    content: bytesToBase64(sealed.subarray(0, cut)),
    authTag: bytesToBase64(sealed.subarray(cut)),
    iv: bytesToBase64(iv),
  };
}

export async function encryptJson(key: KeyMaterial, value: unknown): Promise<EncryptedPayload> {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('the value has no JSON form');
  return encrypt(key, text);
}

function decodeField(field: string, value: string, encoding: 'hex' | 'base64'): Bytes {
  try {
    return encoding === 'hex' ? hexToBytes(value) : base64ToBytes(value);
  } catch {
    throw new DecryptionError(`${field} is not ${encoding}`);
  }
}

/** What decrypt accepts: the service's hex read form, or encrypt's own base64 output (so the two round-trip). */
export type Ciphertext = StoredCiphertext | EncryptedPayload;

/**
 * Decrypts what the service returns (hex: `content`, `auth_tag`, `iv`) or
 * what `encrypt` returned (base64: `content`, `authTag`, `iv`). `fallbackIv`
 * (hex, the key's own `iv`) is used only for objects stored without an IV of
 * their own.
 */
export async function decrypt(key: KeyMaterial, stored: Ciphertext, fallbackIv?: string | null): Promise<Bytes> {
  const fromEncrypt = 'authTag' in stored;
  const encoding = fromEncrypt ? 'base64' : 'hex';
  const ivText = stored.iv ?? fallbackIv;
  if (!ivText) throw new DecryptionError('the object has no IV and no fallback IV was given');
  const iv = stored.iv ? decodeField('iv', stored.iv, encoding) : decodeField('iv', ivText, 'hex');
  const tagField = fromEncrypt ? 'authTag' : 'auth_tag';
  const tag = decodeField(tagField, fromEncrypt ? stored.authTag : stored.auth_tag, encoding);
  if (tag.length !== TAG_BYTES) throw new DecryptionError(`${tagField} must be ${TAG_BYTES} bytes, got ${tag.length}`);
  const content = decodeField('content', stored.content, encoding);
  const sealed = new Uint8Array(content.length + TAG_BYTES);
  sealed.set(content);
  sealed.set(tag, content.length);
  const cryptoKey = await importKey(key);
  try {
    return new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv, tagLength: TAG_BYTES * 8 }, cryptoKey, sealed));
  } catch {
    throw new DecryptionError();
  }
}

export async function decryptText(key: KeyMaterial, stored: Ciphertext, fallbackIv?: string | null): Promise<string> {
  const bytes = await decrypt(key, stored, fallbackIv);
  try {
    return utf8.decode(bytes);
  } catch {
    throw new DecryptionError('the decrypted payload is not UTF-8 text');
  }
}

export async function decryptJson<T = unknown>(
  key: KeyMaterial,
  stored: Ciphertext,
  fallbackIv?: string | null,
): Promise<T> {
  const text = await decryptText(key, stored, fallbackIv);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new DecryptionError('the decrypted payload is not JSON');
  }
}

/** Converts the base64 request form to the hex read form (handy in tests and for local echo). */
export function payloadToStored(payload: EncryptedPayload): StoredCiphertext {
  const hex = (b64: string) => bytesToHex(base64ToBytes(b64));
  return { content: hex(payload.content), auth_tag: hex(payload.authTag), iv: hex(payload.iv) };
}
