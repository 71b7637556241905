// Authentication guards (spec section 5). A route declares its level in
// `config.auth`; this plugin adds the guard and the OpenAPI security entry.
//   any      — a valid token or API key, even while 2FA is pending
//   user     — general authentication: 2FA passed where the user configured it
//   verified — data-plane authentication: `user` plus a verified phone
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppError } from './errors.js';

export type AuthLevel = 'any' | 'user' | 'verified';

export interface AuthContext {
  userId: string;
  email: string;
  firstName: string;
  lastName: string;
  phoneVerified: boolean;
  twoFactorConfigured: boolean;
  twoFactorPassed: boolean;
  credential:
    | { kind: 'session'; jti: string; expiresAt: number; tokenVersion?: number }
    | { kind: 'api_key'; keyId: string };
}

export interface Authenticator {
  /** Resolves a bearer token or API key to its user, or null when it is not valid (expired, revoked, unknown). */
  authenticate(credential: string): Promise<AuthContext | null>;
  /**
   * The caller again, from the identity of a credential authenticated before
   * (its session or key, not the secret): null once that session ended, the key
   * was deleted or the user's tokens were revoked. Event tickets use it.
   */
  recheck(userId: string, credential: AuthContext['credential'], twoFactorPassed: boolean): Promise<AuthContext | null>;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    auth?: AuthLevel;
    /** Also accepts `?ticket=` (POST /api/events/ticket) in place of credentials: streams a browser opens with EventSource. */
    ticket?: boolean;
  }
}

export function credentialOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1] : null;
  }
  return request.cookies?.token || null;
}

export function isTwoFactorPending(auth: AuthContext): boolean {
  return auth.twoFactorConfigured && !auth.twoFactorPassed;
}

/** Redeems a `?ticket=` (src/modules/events/tickets.ts): the caller it stands for, or null. */
export interface TicketRedeemer {
  redeem(ticket: string): Promise<{ auth: AuthContext } | null>;
}

function guard(level: AuthLevel, authenticator: Authenticator, tickets: TicketRedeemer | null): onRequestHookHandler {
  return async (request, reply) => {
    const credential = credentialOf(request);
    const ticket = tickets ? (request.query as Record<string, unknown> | undefined)?.ticket : undefined;
    if (!credential && typeof ticket === 'string') {
      const redeemed = ticket.length <= 4096 ? await tickets!.redeem(ticket) : null;
      if (!redeemed)
        throw new AppError(
          'unauthenticated',
          'the ticket is invalid, expired or already used: POST /api/events/ticket for a new one (each opens one stream, within 60 s)',
        );
      return check(level, (request.auth = redeemed.auth));
    }
    if (!credential) {
      reply.header('www-authenticate', 'Bearer');
      throw new AppError('unauthenticated', 'missing credentials: send Authorization: Bearer <token or API key>');
    }
    const auth = await authenticator.authenticate(credential);
    if (!auth) {
      reply.header('www-authenticate', 'Bearer error="invalid_token"');
      throw new AppError('unauthenticated', 'the token or API key is invalid, expired or revoked');
    }
    request.auth = auth;
    check(level, auth);
  };
}

function check(level: AuthLevel, auth: AuthContext): void {
  if (level === 'any') return;
  if (isTwoFactorPending(auth)) {
    throw new AppError('two_factor_required', 'two-factor verification is pending: POST /api/auth/2fa/verify first');
  }
  if (level === 'verified' && !auth.phoneVerified) {
    throw new AppError(
      'phone_not_verified',
      'phone verification is required: POST /api/auth/verify/request, then /api/auth/verify/submit',
    );
  }
}

/** Must run before any route is registered. */
export function installAuth(
  app: FastifyInstance,
  authenticator: Authenticator,
  tickets: TicketRedeemer | null = null,
): void {
  app.decorateRequest('auth', null);
  app.addHook('onRoute', (route) => {
    const level = route.config?.auth;
    if (!level) return;
    const byTicket = route.config?.ticket === true && tickets !== null;
    const security: Array<Record<string, string[]>> = [
      { bearerAuth: [] },
      { cookieAuth: [] },
      ...(byTicket ? [{ eventTicket: [] }] : []),
    ];
    // x-auth-level tells the OpenAPI transform which 401/403 codes the guard can answer.
    route.schema = { ...route.schema, security, 'x-auth-level': level } as typeof route.schema;
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    route.onRequest = [guard(level, authenticator, byTicket ? tickets : null), ...existing];
  });
}

/** The authenticated caller of a guarded route. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthenticated', 'missing credentials');
  return request.auth;
}
