// Resolves a bearer credential — a session JWT or an API key — to its user.
import type { AuthContext, Authenticator } from '../../http/auth.js';
import { type ApiKeyService, isApiKey } from '../api-keys/service.js';
import { sha256Hex } from '../../lib/crypto.js';
import type { CredentialCache } from './credential-cache.js';
import type { UserRow, UserStore } from './store.js';
import type { TokenService } from './tokens.js';

function contextOf(user: UserRow, twoFactorPassed: boolean, credential: AuthContext['credential']): AuthContext {
  return {
    userId: user.id,
    email: user.email,
    firstName: user.first_name,
    lastName: user.last_name,
    phoneVerified: Boolean(user.phone_verified),
    twoFactorConfigured: Boolean(user.two_factor_enabled),
    twoFactorPassed,
    credential,
  };
}

export class CredentialAuthenticator implements Authenticator {
  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserStore,
    private readonly apiKeys: ApiKeyService,
    /** Recent successful lookups, by `key:<hash>` or `jwt:<jti>` (see credential-cache.ts). */
    private readonly cache: CredentialCache<AuthContext>,
    private readonly now: () => number = Date.now,
  ) {}

  async recheck(
    userId: string,
    credential: AuthContext['credential'],
    twoFactorPassed: boolean,
  ): Promise<AuthContext | null> {
    if (credential.kind === 'api_key') {
      const user = await this.apiKeys.ownerOf(credential.keyId);
      return user && user.id === userId ? contextOf(user, true, credential) : null;
    }
    if (credential.expiresAt <= this.now()) return null;
    const found = await this.users.findForSession(userId, credential.jti);
    if (!found || found.revoked || found.user.token_version !== credential.tokenVersion) return null;
    return contextOf(found.user, twoFactorPassed, credential);
  }

  async authenticate(credential: string): Promise<AuthContext | null> {
    if (isApiKey(credential)) {
      const cacheKey = `key:${sha256Hex(credential)}`;
      const cached = this.cache.get(cacheKey);
      if (cached) return cached;
      const found = await this.apiKeys.resolve(credential);
      if (!found) return null;
      // A key counts as having passed 2FA: only a fully signed-in session can create one.
      const context = contextOf(found.user, true, { kind: 'api_key', keyId: found.keyId });
      this.cache.set(cacheKey, context.userId, context);
      return context;
    }
    // The signature and expiry are checked on every request, cached or not.
    const claims = await this.tokens.verify(credential);
    if (!claims) return null;
    const cacheKey = `jwt:${claims.jti}`;
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const found = await this.users.findForSession(claims.sub, claims.jti);
    if (!found || found.revoked || found.user.token_version !== claims.ver) return null;
    const context = contextOf(found.user, claims.tfa, {
      kind: 'session',
      jti: claims.jti,
      expiresAt: claims.exp * 1000,
      tokenVersion: claims.ver,
    });
    this.cache.set(cacheKey, context.userId, context);
    return context;
  }
}
