// decodeBase64 checks canonical padding without re-encoding the text; the
// re-encoding check it replaced is the reference, over every last character.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase64 } from '../../../src/modules/data/encoding.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** The old rule: what Buffer decodes must encode back to the same text. */
const canonical = (text: string) => Buffer.from(text, 'base64').toString('base64') === text;
const accepted = (text: string) => {
  try {
    decodeBase64(text, 'content');
    return true;
  } catch {
    return false;
  }
};

describe('decodeBase64', () => {
  it('accepts exactly the texts that re-encode to themselves, for every character before the padding', () => {
    for (const stem of ['', 'QUJD', randomBytes(30).toString('base64')]) {
      for (const c of ALPHABET) {
        for (const tail of [`A${c}==`, `AA${c}=`, `AAA${c}`]) {
          const text = stem + tail;
          expect(accepted(text), text).toBe(canonical(text));
        }
      }
    }
  });

  it('decodes random bytes of every length back to themselves', () => {
    for (let n = 0; n < 64; n++) {
      const bytes = randomBytes(n);
      expect(decodeBase64(bytes.toString('base64'), 'content').equals(bytes)).toBe(true);
    }
  });

  it('names what is wrong: not base64, not canonical', () => {
    expect(() => decodeBase64('QUJ', 'content')).toThrow(/standard base64/);
    expect(() => decodeBase64('QU-D', 'content')).toThrow(/standard base64/);
    expect(() => decodeBase64('QQ=A', 'content')).toThrow(/standard base64/);
    expect(() => decodeBase64('QR==', 'content')).toThrow(/not canonical/);
    expect(() => decodeBase64('QUJ=', 'content')).toThrow(/not canonical/);
  });
});
