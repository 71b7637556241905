// Small, dependency-free crypto helpers shared by services.
import { createHmac, hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

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
