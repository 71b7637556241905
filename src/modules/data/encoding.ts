// Wire encodings of the data plane: strict base64 in, hex out (spec 2.7, 2.8),
// base64url SPKI for public keys, and If-Match entity tags for versions.
import { AppError, invalidInput } from '../../http/errors.js';

// A flat character class: a grouped pattern like (?:[…]{4})* overflows V8's
// regexp stack on multi-megabyte input. One search for a character outside
// the alphabet (and '=') is about 40% cheaper than matching the anchored
// pattern ^[A-Za-z0-9+/]*={0,2}$ over the whole text; where '=' may stand is
// checked apart (isBase64Text).
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Exact decoded length of a string that passed the BASE64 pattern with length % 4 === 0. */
const decodedLength = (value: string) =>
  (value.length / 4) * 3 - (value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0);

/**
 * Decodes standard, padded base64 and refuses anything else. Buffer.from is
 * lenient (it skips invalid characters and ignores stray padding), so the text
 * must match the alphabet, have a length divisible by 4 and re-encode to
 * itself (no non-zero padding bits). With `maxBytes`, larger values are
 * refused with 413 before anything is decoded.
 */
/**
 * The text matches ^[A-Za-z0-9+/]*={0,2}$ and its length is a multiple of 4:
 * only alphabet characters, then at most two '=' that end it.
 */
export function isBase64Text(value: string): boolean {
  if (value.length % 4 !== 0 || NOT_BASE64.test(value)) return false;
  const padding = value.indexOf('=');
  if (padding === -1 || padding === value.length - 1) return true;
  return padding === value.length - 2 && value.charCodeAt(value.length - 1) === 61; // '='
}

export function decodeBase64(value: string, field: string, maxBytes?: number): Buffer {
  if (!isBase64Text(value)) {
    throw invalidInput(`${field} must be standard base64 (A–Z, a–z, 0–9, +, /, with = padding)`);
  }
  if (maxBytes !== undefined && decodedLength(value) > maxBytes) {
    throw new AppError('payload_too_large', `${field} is larger than ${maxBytes} bytes`);
  }
  // Alphabet and length are right, so the text is canonical unless the bits that padding leaves over are set.
  if (!paddingBitsClear(value)) throw invalidInput(`${field} is not canonical base64`);
  return Buffer.from(value, 'base64');
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * The character before `==` carries 4 unused low bits, before `=` 2: a
 * canonical encoder writes them as 0 (the same as re-encoding and comparing,
 * without a second copy of the text).
 */
function paddingBitsClear(value: string): boolean {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  if (padding === 0) return true;
  const last = BASE64_ALPHABET.indexOf(value[value.length - padding - 1]!);
  return (last & (padding === 2 ? 0b1111 : 0b11)) === 0;
}

/** Decodes unpadded base64url (padding tolerated), refusing other characters. */
export function decodeBase64Url(value: string, field: string): Buffer {
  const trimmed = value.replace(/={1,2}$/, '');
  if (!BASE64URL.test(trimmed) || trimmed.length % 4 === 1) throw invalidInput(`${field} must be base64url`);
  const bytes = Buffer.from(trimmed, 'base64url');
  if (bytes.toString('base64url') !== trimmed) throw invalidInput(`${field} is not canonical base64url`);
  return bytes;
}

export const hex = (bytes: Buffer | null) => (bytes === null ? null : bytes.toString('hex'));

export const etagOf = (version: number) => `"${version}"`;

/**
 * The versions an If-Match header accepts: null for no header or `*` (any
 * version), otherwise the listed versions. Accepts `"3"`, `3` and lists; a tag
 * that is not a version can never match, so it yields an empty list (412).
 */
export function parseIfMatch(header: string | undefined): number[] | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (text === '' || text === '*') return null;
  const versions: number[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*"?(\d{1,15})"?\s*$/.exec(part);
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

export const versionMismatch = (current: number) =>
  new AppError(
    'version_mismatch',
    `the object is at version ${current}; fetch it again and retry with If-Match: "${current}"`,
    { version: current },
  );
