// Builds the auth area: users and sessions, the authenticator every request
// goes through, phone verification, password reset, two-factor and external
// sign-in. It is given the API-key area (the authenticator accepts keys; its
// credential cache is shared with sessions), the providers it sends through,
// and its slice of the configuration.
import type { Kysely } from 'kysely';
import type { AuthSettings, Config } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { EmailProvider } from '../../providers/email/interface.js';
import { createIdentityProviders } from '../../providers/oauth/oidc.js';
import type { SmsProvider } from '../../providers/sms/interface.js';
import type { Secrets } from '../../secrets.js';
import type { ApiKeyService } from '../api-keys/service.js';
import type { AuditLog } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { BackgroundMail } from './account-mail.js';
import { CredentialAuthenticator } from './authenticator.js';
import type { CredentialCache } from './credential-cache.js';
import { ExternalSignInService } from './external-service.js';
import { ExternalIdentityStore } from './external-store.js';
import { PasswordHasher } from './passwords.js';
import { PasswordResetService } from './reset-service.js';
import { PasswordResetStore } from './reset-store.js';
import { AuthService } from './service.js';
import { UserStore } from './store.js';
import { TokenService } from './tokens.js';
import { TwoFactorService } from './two-factor-service.js';
import { TwoFactorStore } from './two-factor-store.js';
import { PhoneVerificationService } from './verification-service.js';
import { PhoneCodeStore } from './verification-store.js';

export interface AuthServiceDeps {
  db: Kysely<Database>;
  /** Sessions' lifetimes, return pages and rate limits (AuthSettings); PASSWORD_HASH_*; the OIDC providers (OIDC_*). */
  config: AuthSettings & Pick<Config, 'passwordHash' | 'oidcProviders'>;
  /** jwtSecret signs session tokens; masterKey keys the phone-code hashes. */
  secrets: Pick<Secrets, 'jwtSecret' | 'masterKey'>;
  /** Encrypts two-factor secrets. */
  secretBox: SecretBox;
  apiKeys: { apiKeys: ApiKeyService; credentialCache: CredentialCache<AuthContext> };
  /** Account mail and phone codes are sent through these. */
  providers: { email: EmailProvider; sms: SmsProvider };
  limiter: RateLimiter;
  audit: AuditLog;
  clock: Clock;
}

export function createAuthServices(deps: AuthServiceDeps) {
  const { db, config, limiter, audit, clock } = deps;
  const { credentialCache } = deps.apiKeys;
  const { publicUrl, returnUrlOrigins, sessionTtlSeconds, rememberTtlSeconds, twoFactorPendingTtlSeconds, rateLimits } =
    config;
  const settings: AuthSettings = {
    publicUrl,
    returnUrlOrigins,
    sessionTtlSeconds,
    rememberTtlSeconds,
    twoFactorPendingTtlSeconds,
    rateLimits,
  };
  const users = new UserStore(db, credentialCache);
  const tokens = new TokenService(deps.secrets.jwtSecret, clock);
  const passwords = new PasswordHasher(config.passwordHash);
  const authenticator = new CredentialAuthenticator(tokens, users, deps.apiKeys.apiKeys, credentialCache, () =>
    clock.now(),
  );
  const accountMail = new BackgroundMail(deps.providers.email);
  const auth = new AuthService(settings, users, tokens, passwords, accountMail, limiter, audit, clock);
  const externalStore = new ExternalIdentityStore(db);
  const phoneCodes = new PhoneCodeStore(db, credentialCache);
  const resetStore = new PasswordResetStore(db, credentialCache);
  return {
    users,
    tokens,
    passwords,
    authenticator,
    accountMail,
    auth,
    externalSignIn: new ExternalSignInService(
      settings,
      createIdentityProviders(config.oidcProviders),
      externalStore,
      users,
      auth,
      limiter,
      audit,
      clock,
    ),
    phoneVerification: new PhoneVerificationService(
      settings,
      users,
      phoneCodes,
      auth,
      deps.providers.sms,
      limiter,
      audit,
      clock,
      deps.secrets.masterKey,
    ),
    passwordReset: new PasswordResetService(
      settings,
      users,
      resetStore,
      auth,
      passwords,
      accountMail,
      limiter,
      audit,
      clock,
    ),
    twoFactor: new TwoFactorService(
      settings,
      new TwoFactorStore(db, credentialCache),
      deps.secretBox,
      auth,
      limiter,
      audit,
      clock,
    ),
    /** What housekeeping purges of this area, oldest first. */
    expired: {
      revokedTokens: (now: number) => users.deleteExpiredRevocations(now),
      phoneCodes: (now: number) => phoneCodes.deleteExpired(now),
      passwordResets: (now: number) => resetStore.deleteExpired(now),
      externalFlows: (now: number) => externalStore.deleteExpired(now),
    },
  };
}
