// Byte encodings the API uses: strict base64 on input, hex on output. Written
// against atob/btoa so the SDK runs unchanged in browsers and Node 20.

/** A Uint8Array backed by a plain ArrayBuffer, as WebCrypto's BufferSource wants. */
export type Bytes = Uint8Array<ArrayBuffer>;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  // String.fromCharCode takes its arguments on the stack: go in slices.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function base64ToBytes(text: string): Bytes {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new TypeError('not valid base64');
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

const HEX = '0123456789abcdef';

export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b >> 4] + HEX[b & 15];
  return out;
}

function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 97 && code <= 102) return code - 87; // a-f
  if (code >= 65 && code <= 70) return code - 55; // A-F
  return -1;
}

export function hexToBytes(text: string): Bytes {
  if (text.length % 2 !== 0) throw new TypeError('not valid hex');
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i += 1) {
    const high = nibble(text.charCodeAt(i * 2));
    const low = nibble(text.charCodeAt(i * 2 + 1));
    if (high < 0 || low < 0) throw new TypeError('not valid hex');
    out[i] = (high << 4) | low;
  }
  return out;
}

export const utf8 = {
  encode: (text: string): Bytes => new TextEncoder().encode(text) as Bytes,
  decode: (bytes: Uint8Array): string => new TextDecoder('utf-8', { fatal: true }).decode(bytes),
};
