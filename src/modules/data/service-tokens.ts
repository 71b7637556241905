// Tokens the service issues to a user and later accepts back from them (a
// phone number's price, a temporary session's key): a compact JWS (ES256)
// signed with the service's current key pair (`kid` = its server name, so a
// rotated key still verifies its tokens), bound to the user (`sub`) and to
// one purpose (`use`), with a `jti` and an expiry. Spending a jti once is
// the single-use ledger's job (platform/single-use.ts).
import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { ServiceKeyring } from './server-keys.js';

export interface IssuedToken {
  token: string;
  jti: string;
  /** Epoch ms. */
  expiresAt: number;
}

export interface AcceptedToken {
  jti: string;
  /** Epoch ms. */
  expiresAt: number;
  claims: Record<string, unknown>;
}

/** Why a token was refused: the caller words the error for its own kind of token. */
export type TokenRefusal = 'malformed' | 'foreign' | 'expired' | 'invalid' | 'wrong-use' | 'other-user';

export class ServiceTokens {
  constructor(
    private readonly keyring: ServiceKeyring,
    private readonly clock: Clock,
  ) {}

  async sign(use: string, userId: string, claims: Record<string, unknown>, ttlSeconds: number): Promise<IssuedToken> {
    const server = await this.keyring.current();
    const key = await this.keyring.getServicePrivateKey(server.current);
    if (!key) throw new Error(`service key ${server.current} has no private key`);
    const iat = Math.floor(this.clock.now() / 1000);
    const jti = newId();
    const token = await new SignJWT({ ...claims, use })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: server.current })
      .setSubject(userId)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .sign(key);
    return { token, jti, expiresAt: (iat + ttlSeconds) * 1000 };
  }

  /** The claims of a genuine, unexpired token of `use` issued to `userId`; otherwise `refuse(why)` is thrown. */
  async verify(
    token: string,
    use: string,
    userId: string,
    refuse: (why: TokenRefusal) => Error,
  ): Promise<AcceptedToken> {
    let kid: unknown;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw refuse('malformed');
    }
    const key =
      typeof kid === 'string' && (await this.keyring.isServiceServer(kid))
        ? await this.keyring.getServicePublicKey(kid)
        : null;
    if (!key) throw refuse('foreign');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: ['ES256'],
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'jti', 'exp'],
      }));
    } catch (err) {
      throw refuse((err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'invalid');
    }
    if (payload.use !== use) throw refuse('wrong-use');
    if (payload.sub !== userId) throw refuse('other-user');
    return { jti: String(payload.jti), expiresAt: Number(payload.exp) * 1000, claims: payload };
  }
}
