import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publicKeyOfSpki } from '../../src/lib/crypto.js';

const spkiOf = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ format: 'der', type: 'spki' })
    .toString('base64url');

describe('publicKeyOfSpki', () => {
  it('parses a key once: the same bytes give the same KeyObject, other bytes their own key', () => {
    const a = spkiOf();
    const b = spkiOf();
    const key = publicKeyOfSpki(a);
    expect(publicKeyOfSpki(a)).toBe(key);
    expect(key.export({ format: 'der', type: 'spki' }).toString('base64url')).toBe(a);
    const other = publicKeyOfSpki(b);
    expect(other).not.toBe(key);
    expect(other.export({ format: 'der', type: 'spki' }).toString('base64url')).toBe(b);
  });

  it('refuses bytes that are no key, and does not keep them', () => {
    expect(() => publicKeyOfSpki('bm90IGEga2V5')).toThrow();
    expect(() => publicKeyOfSpki('bm90IGEga2V5')).toThrow();
  });

  it('keeps at most a thousand keys, dropping the oldest first', () => {
    const first = spkiOf();
    const key = publicKeyOfSpki(first);
    for (let i = 0; i < 1000; i++) publicKeyOfSpki(spkiOf());
    const again = publicKeyOfSpki(first);
    expect(again).not.toBe(key);
    expect(again.equals(key)).toBe(true);
  });
});
