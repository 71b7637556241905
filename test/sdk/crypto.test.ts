// The SDK's AES-GCM helpers on their own: the wire format (tag apart from the
// ciphertext, all base64) checked against node:crypto, fresh IVs, and refusal
// of anything altered. The round trip through a real server is in data.test.ts.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DecryptionError,
  bytesToBase64,
  base64ToBytes,
  bytesToHex,
  decrypt,
  decryptJson,
  decryptText,
  encrypt,
  encryptJson,
  generateKeyBytes,
  hexToBytes,
  importKey,
  payloadToStored,
} from '../../sdk/src/index.js';

const keyHex = randomBytes(32).toString('hex');

/** Flips one bit of a hex string at byte `index`. */
function flip(hex: string, index = 0): string {
  const bytes = hexToBytes(hex);
  bytes[index] ^= 0x01;
  return bytesToHex(bytes);
}

describe('encrypt', () => {
  it('produces base64 ciphertext without the tag, a 16-byte tag and a 12-byte IV that node:crypto decrypts', async () => {
    const payload = await encrypt(keyHex, 'hello, world');
    expect(Buffer.from(payload.authTag, 'base64')).toHaveLength(16);
    expect(Buffer.from(payload.iv, 'base64')).toHaveLength(12);
    // Strict base64, as the service wants it: re-encoding gives the same text.
    for (const field of [payload.content, payload.authTag, payload.iv])
      expect(Buffer.from(field, 'base64').toString('base64')).toBe(field);
    expect(Buffer.from(payload.content, 'base64')).toHaveLength('hello, world'.length);

    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), Buffer.from(payload.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(payload.authTag, 'base64'));
    const plain = Buffer.concat([decipher.update(Buffer.from(payload.content, 'base64')), decipher.final()]).toString(
      'utf8',
    );
    expect(plain).toBe('hello, world');
  });

  it('draws a fresh IV for every encryption of the same plaintext', async () => {
    const ivs = new Set<string>();
    const contents = new Set<string>();
    for (let i = 0; i < 50; i += 1) {
      const p = await encrypt(keyHex, 'same');
      ivs.add(p.iv);
      contents.add(p.content);
    }
    expect(ivs.size).toBe(50);
    expect(contents.size).toBe(50);
  });

  it('accepts a CryptoKey, raw bytes or hex, and refuses a key of the wrong size', async () => {
    const bytes = generateKeyBytes();
    expect(bytes).toHaveLength(32);
    const fromBytes = await encrypt(bytes, 'x');
    expect(await decryptText(await importKey(bytesToHex(bytes)), payloadToStored(fromBytes))).toBe('x');
    await expect(encrypt(new Uint8Array(31), 'x')).rejects.toThrow(/16, 24 or 32 bytes/);
    await expect(encrypt('abc', 'x')).rejects.toThrow(/hex/);
  });
});

describe('decrypt', () => {
  it('reads what node:crypto wrote in the service’s read form (hex)', async () => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyHex, 'hex'), iv);
    const content = Buffer.concat([cipher.update(JSON.stringify({ name: 'Ada', n: 1 }), 'utf8'), cipher.final()]);
    const stored = {
      content: content.toString('hex'),
      auth_tag: cipher.getAuthTag().toString('hex'),
      iv: iv.toString('hex'),
    };
    expect(await decryptJson(keyHex, stored)).toEqual({ name: 'Ada', n: 1 });
  });

  it('round-trips JSON, unicode and binary', async () => {
    const value = { name: 'Zoë 🚀', tags: ['a', 'b'], nested: { ok: true, n: 1.5 } };
    expect(await decryptJson(keyHex, payloadToStored(await encryptJson(keyHex, value)))).toEqual(value);
    const binary = new Uint8Array(randomBytes(70_000));
    expect(Buffer.from(await decrypt(keyHex, payloadToStored(await encrypt(keyHex, binary)))).equals(binary)).toBe(
      true,
    );
    expect(await decryptText(keyHex, payloadToStored(await encrypt(keyHex, '')))).toBe('');
  });

  it('uses the fallback IV only for an object stored without one', async () => {
    const stored = payloadToStored(await encrypt(keyHex, 'x'));
    const { iv, ...withoutIv } = stored;
    expect(await decryptText(keyHex, { ...withoutIv, iv: null }, iv)).toBe('x');
    await expect(decryptText(keyHex, { ...withoutIv, iv: null })).rejects.toThrow(DecryptionError);
    // The object's own IV wins over the fallback.
    expect(await decryptText(keyHex, stored, flip(iv!))).toBe('x');
  });

  it.each([
    ['ciphertext', (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, content: flip(s.content, 3) })],
    ['tag', (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, auth_tag: flip(s.auth_tag, 15) })],
    ['IV', (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, iv: flip(s.iv, 0) })],
    [
      'truncated ciphertext',
      (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, content: s.content.slice(0, -2) }),
    ],
    [
      'tag of the wrong length',
      (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, auth_tag: s.auth_tag.slice(0, 30) }),
    ],
    ['non-hex tag', (s: { content: string; auth_tag: string; iv: string }) => ({ ...s, auth_tag: 'zz'.repeat(16) })],
  ])('refuses an altered %s with DecryptionError', async (_what, alter) => {
    const stored = payloadToStored(await encrypt(keyHex, 'secret payload')) as {
      content: string;
      auth_tag: string;
      iv: string;
    };
    await expect(decrypt(keyHex, alter(stored))).rejects.toBeInstanceOf(DecryptionError);
  });

  it('refuses the wrong key', async () => {
    const stored = payloadToStored(await encrypt(keyHex, 'secret'));
    await expect(decrypt(randomBytes(32).toString('hex'), stored)).rejects.toBeInstanceOf(DecryptionError);
  });
});

describe('encodings', () => {
  it('base64 and hex agree with Buffer, also past the 32 KiB slice', () => {
    const bytes = new Uint8Array(randomBytes(100_003));
    expect(bytesToBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(Buffer.from(base64ToBytes(Buffer.from(bytes).toString('base64'))).equals(bytes)).toBe(true);
    expect(bytesToHex(bytes)).toBe(Buffer.from(bytes).toString('hex'));
    expect(Buffer.from(hexToBytes(Buffer.from(bytes).toString('hex').toUpperCase())).equals(bytes)).toBe(true);
    expect(() => hexToBytes('abc')).toThrow(TypeError);
    expect(() => base64ToBytes('***')).toThrow(TypeError);
  });
});
