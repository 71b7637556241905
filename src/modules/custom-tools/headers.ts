// A tool's headers usually carry the customer's credentials for their own
// API (Authorization, X-Api-Key). Their values are sealed with the master key
// as soon as a tool is declared, are shown only as `****`, and are opened
// only to build the request.
import type { SecretBox } from '../../lib/secret-box.js';

/** A header value sealed with the SecretBox (only sealHeaders makes one). */
export type SealedValue = string & { readonly __sealedHeaderValue: unique symbol };
export type SealedHeaders = Readonly<Record<string, SealedValue>>;

export const MASK = '****';
export const MAX_HEADERS = 20;
export const MAX_HEADER_VALUE_LENGTH = 4096;

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Visible ASCII, space, tab and obs-text: no CR, LF or other control characters. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Set by the server (framing, the body's type, the signature), never by a tool. */
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** Why a declared header cannot be sent, or null. */
export function headerProblem(name: string, value: unknown): string | null {
  if (!HEADER_NAME.test(name)) return 'is not a valid header name';
  if (RESERVED.has(name.toLowerCase())) return 'is set by the server and cannot be given';
  if (typeof value !== 'string') return 'must be a string';
  if (value.length > MAX_HEADER_VALUE_LENGTH) return `is longer than ${MAX_HEADER_VALUE_LENGTH} characters`;
  if (!HEADER_VALUE.test(value)) return 'must not contain control characters (CR, LF, …)';
  return null;
}

export function sealHeaders(box: SecretBox, headers: Readonly<Record<string, string>>): SealedHeaders {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, box.seal(value) as SealedValue]));
}

/** The headers as every answer shows them: names kept, each value `****`. */
export function maskHeaders(headers: Readonly<Record<string, string>>): Record<string, typeof MASK> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, MASK]));
}

/** The clear values, for the request only (never stored, logged or answered). */
export function openHeaders(box: SecretBox, headers: SealedHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, box.openText(value)]));
}
