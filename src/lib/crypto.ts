// Small, dependency-free crypto helpers shared by services.
import {
  type KeyObject,
  createHmac,
  createPublicKey,
  hash,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto';

// crypto.hash: one call, no Hash object (it shows in the API-key auth of every request).
export const sha256Hex = (value: string | Buffer): string => hash('sha256', value, 'hex');

export const hmacHex = (secret: Buffer | string, value: string): string =>
  createHmac('sha256', secret).update(value).digest('hex');

/** Constant-time comparison of two strings (length differences return false without early exit on content). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** A URL-safe random token with `bytes` bytes of entropy. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** A numeric code of `digits` digits from the CSPRNG, leading zeros kept. */
export function randomDigits(digits: number): string {
  let out = '';
  for (let i = 0; i < digits; i++) out += String(randomInt(0, 10));
  return out;
}

/** How many parsed public keys `publicKeyOfSpki` keeps (each a few hundred bytes). */
const PUBLIC_KEY_CACHE_SIZE = 1000;
const publicKeys = new Map<string, KeyObject>();

/**
 * The KeyObject of a base64url SPKI DER, parsed once: the bytes decide the key,
 * so a cached one is always right. Parsing cost ~100 µs of the main thread on
 * every signed call and token (createPublicKey, then WebCrypto's import of it),
 * 5% of the loop while 50 calls started at once (bench/voice.ts). Oldest out
 * first when full. Throws as createPublicKey does on bytes that are no key.
 */
export function publicKeyOfSpki(spki: string): KeyObject {
  const cached = publicKeys.get(spki);
  if (cached) return cached;
  const key = createPublicKey({ key: Buffer.from(spki, 'base64url'), format: 'der', type: 'spki' });
  if (publicKeys.size >= PUBLIC_KEY_CACHE_SIZE) publicKeys.delete(publicKeys.keys().next().value!);
  publicKeys.set(spki, key);
  return key;
}
