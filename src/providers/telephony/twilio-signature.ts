// X-Twilio-Signature (Twilio's webhook security): base64 HMAC-SHA1, keyed with
// the account's auth token, over the full URL Twilio requested followed by
// every POST parameter as name + value, names sorted (a repeated name's
// distinct values sorted too). Verified as Twilio's own library does it: the
// URL as received, without its port and with the scheme's default port.
import { createHmac } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import { safeEqual } from '../../lib/crypto.js';

export type SignedParams = Record<string, string | string[]>;

export function twilioSignature(authToken: string, url: string, params: SignedParams): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    const values = Array.isArray(value) ? [...new Set(value)].sort() : [value];
    for (const v of values) data += name + v;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** The URL with and without an explicit port: Twilio may have signed either. */
function urlVariants(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)(:\d+)?(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme, userInfo = '', host, port, rest] = match;
  const defaultPort = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  return [...new Set([url, scheme + userInfo + host + rest, scheme + userInfo + host + (port ?? defaultPort) + rest])];
}

/** Constant-time check of an X-Twilio-Signature header against one or more auth tokens; returns the index of the token that signed, or -1. */
export function verifyTwilioSignature(
  authTokens: string[],
  header: string | undefined,
  url: string,
  params: SignedParams,
): number {
  const given = header ?? '';
  let found = -1;
  for (let i = 0; i < authTokens.length; i++) {
    for (const candidate of urlVariants(url)) {
      // Compare every candidate (no early exit) so the time does not depend on which one matched.
      const same = safeEqual(given, twilioSignature(authTokens[i], candidate, params));
      if (same && found === -1) found = i;
    }
  }
  return found;
}

/** Form parameters as Twilio's signature sees them: a repeated name becomes an array. */
export function formParams(body: string): SignedParams {
  const out: SignedParams = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else out[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return out;
}

/**
 * The provider among `providers` whose auth token signed this callback
 * (`url` = PUBLIC_URL plus the request URI as received); 400
 * `invalid_signature` when none did. Every Twilio callback route checks this first.
 */
export function verifyTwilioCallback<P extends { callbackSigningToken: string }>(
  providers: readonly P[],
  header: string | undefined,
  url: string,
  params: SignedParams,
): P {
  const index = verifyTwilioSignature(
    providers.map((p) => p.callbackSigningToken),
    header,
    url,
    params,
  );
  if (index < 0) throw new AppError('invalid_signature', 'X-Twilio-Signature does not match this request');
  return providers[index]!;
}

/** One value of a form parameter (the first, when it repeats). */
export function formValue(params: SignedParams, name: string): string | undefined {
  const value = params[name];
  return Array.isArray(value) ? value[0] : value;
}
