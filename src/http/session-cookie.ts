// The `token` cookie (spec 5.1): HTTP-only, SameSite=Lax, Secure on https.
import type { FastifyReply } from 'fastify';
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
  reply.clearCookie('token', { httpOnly: true, sameSite: 'lax', secure: config.publicUrl.startsWith('https:'), path: '/' });
}

/** The JSON answer of every flow that signs a user in. */
export const sessionBody = (session: SessionResult) => ({ status: session.status, token: session.token, auth: session.auth });
