// The `token` cookie (spec 5.1): HTTP-only, SameSite=Lax, Secure on https.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionResult } from '../modules/auth/service.js';

/** What the session cookie depends on: the public address (an https one makes the cookie Secure). */
export interface CookieSettings {
  publicUrl: string;
}

export function writeSessionCookie(reply: FastifyReply, config: CookieSettings, session: SessionResult): void {
  if (session.cookieMaxAge === null) return;
  reply.setCookie('token', session.token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicUrl.startsWith('https:'),
    path: '/',
    maxAge: session.cookieMaxAge,
  });
}

export function clearSessionCookie(reply: FastifyReply, config: CookieSettings): void {
  reply.clearCookie('token', {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicUrl.startsWith('https:'),
    path: '/',
  });
}

/** The JSON answer of every flow that signs a user in. */
export const sessionBody = (session: SessionResult) => ({
  status: session.status,
  token: session.token,
  auth: session.auth,
});

/**
 * True when the credential of a request is the session cookie (no bearer
 * token) and the browser says the request comes from another site:
 * `Sec-Fetch-Site` `cross-site` or `same-site`, or an Origin that is neither
 * PUBLIC_URL's nor the host the request was sent to. A link or form elsewhere
 * can make a browser send the cookie (SameSite=Lax lets top-level GETs
 * through); a bearer token it cannot send. Requests without these headers
 * (curl, SDKs, older browsers) are not from another site as far as we can tell.
 */
export function sessionCookieFromAnotherSite(request: FastifyRequest, config: CookieSettings): boolean {
  if (request.headers.authorization || !request.cookies?.token) return false;
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (origin === new URL(config.publicUrl).origin) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true; // `null` (a sandboxed frame, a redirect from elsewhere) or garbage
  }
}
