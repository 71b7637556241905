// Event stream tickets (DESIGN.md "Event streams from browser apps on other
// sites"). EventSource cannot send an Authorization header, and a SameSite=Lax
// cookie does not cross sites, so a browser app on another site asks
// POST /api/events/ticket (with its usual credential) for a ticket and opens
// GET /api/events/{type}?ticket=… with it instead.
//
// A ticket is a JWT (HS256, a key of its own derived from the JWT secret, so a
// session token is never a ticket nor a ticket a session token) naming the
// user, the credential that asked for it (its session id or API key id, never
// the secret) and a one-time id. It is accepted once (the single-use ledger,
// across instances) within 60 s of issue. Redeeming it re-checks that
// credential, so a ticket of an ended session or a deleted key opens nothing,
// and the stream it opened goes on re-checking it as a header-opened stream does.
import { createHash } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { AuthContext, Authenticator } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import type { SingleUseTokens } from '../platform/single-use.js';

export const TICKET_TTL_MS = 60_000;
const TICKET_TYPE = 'event-ticket+jwt';

export interface IssuedTicket {
  ticket: string;
  expiresAt: string;
}

export interface RedeemedTicket {
  /** The caller as the ticket's credential authenticates now. */
  auth: AuthContext;
  /** Re-checks the ticket's credential (for the stream's periodic re-authorization). */
  recheck: () => Promise<AuthContext | null>;
}

export class EventTickets {
  private readonly key: Uint8Array;

  constructor(
    jwtSecret: string,
    private readonly singleUse: SingleUseTokens,
    private readonly authenticator: Authenticator,
    private readonly clock: Clock,
  ) {
    this.key = createHash('sha256').update(`event-ticket\0${jwtSecret}`).digest();
  }

  async issue(auth: AuthContext): Promise<IssuedTicket> {
    const now = this.clock.now();
    const expiresAt = now + TICKET_TTL_MS;
    const ticket = await new SignJWT({ cred: auth.credential, tfa: auth.twoFactorPassed, exp_ms: expiresAt })
      .setProtectedHeader({ alg: 'HS256', typ: TICKET_TYPE })
      .setSubject(auth.userId)
      .setJti(newId())
      .sign(this.key);
    return { ticket, expiresAt: iso(expiresAt) };
  }

  /** The caller a ticket stands for, spending it; null for a forged, expired, used or revoked one. */
  async redeem(ticket: string): Promise<RedeemedTicket | null> {
    let claims: { sub?: unknown; jti?: unknown; cred?: unknown; tfa?: unknown; exp_ms?: unknown };
    try {
      const verified = await jwtVerify(ticket, this.key, { algorithms: ['HS256'], typ: TICKET_TYPE });
      claims = verified.payload;
    } catch {
      return null;
    }
    const { sub, jti, cred, tfa, exp_ms: expiresAt } = claims;
    if (typeof sub !== 'string' || typeof jti !== 'string' || typeof expiresAt !== 'number' || !isCredential(cred))
      return null;
    if (expiresAt <= this.clock.now()) return null;
    if (!(await this.singleUse.spend('event-ticket', jti, expiresAt))) return null;
    const recheck = () => this.authenticator.recheck(sub, cred, tfa === true);
    const auth = await recheck();
    return auth ? { auth, recheck } : null;
  }
}

function isCredential(value: unknown): value is AuthContext['credential'] {
  const c = value as Record<string, unknown> | null;
  if (!c || typeof c !== 'object') return false;
  if (c.kind === 'api_key') return typeof c.keyId === 'string';
  return (
    c.kind === 'session' &&
    typeof c.jti === 'string' &&
    typeof c.expiresAt === 'number' &&
    (c.tokenVersion === undefined || typeof c.tokenVersion === 'number')
  );
}
