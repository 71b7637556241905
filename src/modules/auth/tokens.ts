// Session JWTs (HS256). Claims: sub, iat, exp, jti, plus `ver` (the user's
// token version: bumping it ends every session) and `tfa` (2FA passed).
import { SignJWT, jwtVerify } from 'jose';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

export interface SessionClaims {
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  ver: number;
  tfa: boolean;
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: number;
  ttlSeconds: number;
}

/** Signature checks remembered per token string; a token's claims never change, only its expiry passes. */
const VERIFIED_CACHE_SIZE = 10_000;

export class TokenService {
  private readonly key: Uint8Array;
  private readonly verified = new Map<string, SessionClaims>();
  constructor(
    secret: string,
    private readonly clock: Clock,
  ) {
    this.key = new TextEncoder().encode(secret);
  }

  async issue(
    user: { id: string; token_version: number },
    options: { ttlSeconds: number; twoFactorPassed: boolean },
  ): Promise<IssuedToken> {
    const iat = Math.floor(this.clock.now() / 1000);
    const exp = iat + options.ttlSeconds;
    const jti = newId();
    const token = await new SignJWT({ ver: user.token_version, tfa: options.twoFactorPassed })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(user.id)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(this.key);
    return { token, jti, expiresAt: exp * 1000, ttlSeconds: options.ttlSeconds };
  }

  /** The claims of a valid, unexpired token; null otherwise. */
  async verify(token: string): Promise<SessionClaims | null> {
    const known = this.verified.get(token);
    if (known) {
      if (known.exp * 1000 > this.clock.now()) return known;
      this.verified.delete(token);
      return null;
    }
    const claims = await this.verifySignature(token);
    if (claims) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, claims);
    }
    return claims;
  }

  private async verifySignature(token: string): Promise<SessionClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.clock.now()),
      });
      if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string' || typeof payload.exp !== 'number')
        return null;
      return {
        sub: payload.sub,
        jti: payload.jti,
        iat: Number(payload.iat),
        exp: payload.exp,
        ver: Number(payload.ver ?? 0),
        tfa: payload.tfa === true,
      };
    } catch {
      return null;
    }
  }
}
