// Resolves a bearer credential — a session JWT or an API key — to its user.
import type { AuthContext, Authenticator } from '../../http/auth.js';
import { type ApiKeyService, isApiKey } from '../api-keys/service.js';
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
  ) {}

  async authenticate(credential: string): Promise<AuthContext | null> {
    if (isApiKey(credential)) {
      const found = await this.apiKeys.resolve(credential);
      // A key counts as having passed 2FA: only a fully signed-in session can create one.
      return found ? contextOf(found.user, true, { kind: 'api_key', keyId: found.keyId }) : null;
    }
    const claims = await this.tokens.verify(credential);
    if (!claims) return null;
    const found = await this.users.findForSession(claims.sub, claims.jti);
    if (!found || found.revoked || found.user.token_version !== claims.ver) return null;
    return contextOf(found.user, claims.tfa, { kind: 'session', jti: claims.jti, expiresAt: claims.exp * 1000 });
  }
}
