// Connector paths, normalised before anything else looks at them: the billing
// decision (`/get-leads` spends credits) and the outgoing URL both use the
// normalised path, so no spelling of it (case, trailing or doubled slashes,
// `.`/`..` segments, percent-encoded dots) reaches the leads endpoint without
// its billing or climbs out of CONNECTOR_URL's base path.
// See docs/decisions/connect.md "The request".
import { invalidInput } from '../../http/errors.js';

export const LEADS_PATH = '/get-leads';

/** Characters a request path may use: RFC 3986 path characters, without `;` (path parameters some servers strip). */
const PATH_CHARS = /^\/[A-Za-z0-9._~!$&'()*+,=:@%/-]*$/;
/** A well-formed percent escape. */
const ESCAPE = /%[0-9A-Fa-f]{2}/g;
/** Escapes that change how a server splits the path: `/`, `\`, NUL, `;`, `?`, `#`. */
const SPLITTING_ESCAPES = /%(2f|5c|00|3b|3f|23)/i;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

export interface NormalisedPath {
  /** The path sent to the connector (appended to CONNECTOR_URL's base path). */
  path: string;
  /** The path is the paid leads endpoint. */
  leads: boolean;
}

/**
 * Normalises a connector path: escapes of unreserved characters decoded
 * (`%2e` is `.`), other escapes in upper case, empty segments dropped
 * (doubled and trailing slashes), `.` and `..` resolved. A `..` above the root
 * (an attempt to leave the base path) and escapes that split paths (`%2f`,
 * `%5c`, …) are 400. Any case of `/get-leads` is the leads endpoint and is
 * sent as `/get-leads`; other paths keep their case.
 */
export function normaliseConnectorPath(raw: string): NormalisedPath {
  const refuse = (why: string) => invalidInput(`path must be a connector path starting with "/" (${why})`);
  if (!PATH_CHARS.test(raw)) throw refuse('URL path characters only');
  if (/%(?![0-9A-Fa-f]{2})/.test(raw)) throw refuse('"%" only in percent escapes');
  if (SPLITTING_ESCAPES.test(raw)) throw refuse('no encoded "/", "\\", ";", "?", "#" or NUL');
  const decoded = raw.replace(ESCAPE, (escape) => {
    const char = String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    return UNRESERVED.test(char) ? char : escape.toUpperCase();
  });
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) throw refuse("it may not climb above the connector's base path");
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  const path = `/${segments.join('/')}`;
  if (path.toLowerCase() === LEADS_PATH) return { path: LEADS_PATH, leads: true };
  return { path, leads: false };
}
