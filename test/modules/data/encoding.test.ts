// decodeBase64 checks canonical padding without re-encoding the text; the
// re-encoding check it replaced is the reference, over every last character.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase64, isBase64Text } from '../../../src/modules/data/encoding.js';

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

  it('takes the texts the anchored pattern took, and no other (isBase64Text against ^[A-Za-z0-9+/]*={0,2}$ and length % 4)', () => {
    const old = (text: string) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
    // Every placement of up to four '=' and of a foreign character in short texts, then random mixes.
    const symbols = ['A', 'z', '0', '+', '/', '=', '-', '_', ' ', '\n', '\0', '.', 'é', 'Ł', '\ud800', '😀'];
    const texts: string[] = [
      '',
      '=',
      '==',
      '===',
      '====',
      'QUJD',
      'QQ==',
      'QUI=',
      'Q===',
      '=QUJ',
      'QU=J',
      'QUJD\n',
      'QUJD====',
    ];
    for (const a of symbols)
      for (const b of symbols)
        for (const c of ['A', '='])
          for (const d of ['A', '=']) texts.push(a + b + c + d, c + d + a + b, `QUJD${a}${b}${c}${d}`);
    for (let i = 0; i < 5000; i++) {
      const length = 4 * (1 + (i % 6)) + (i % 7 === 0 ? 1 : 0);
      let text = '';
      for (let j = 0; j < length; j++)
        text +=
          Math.random() < 0.9
            ? ALPHABET[Math.floor(Math.random() * 64)]
            : symbols[Math.floor(Math.random() * symbols.length)];
      texts.push(text, `${text.slice(0, -2)}==`, `${text.slice(0, -1)}=`);
    }
    texts.push(randomBytes(1024).toString('base64'), randomBytes(1024).toString('base64').replace('A', 'Ł'));
    for (const text of texts) expect(isBase64Text(text), JSON.stringify(text)).toBe(old(text));
  });
});
