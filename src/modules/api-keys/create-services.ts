// Builds the API-key area's service and the credential cache of recent
// lookups it shares with the auth area's sessions, so ending either (deleting
// a key, signing out) takes effect at once on this instance.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import { CredentialCache } from '../auth/credential-cache.js';
import type { AuditLog } from '../platform/audit.js';
import { ApiKeyService } from './service.js';
import { ApiKeyStore } from './store.js';

export interface ApiKeyServiceDeps {
  db: Kysely<Database>;
  audit: AuditLog;
  clock: Clock;
  /** AUTH_CACHE_MS: how long a credential lookup is remembered. */
  config: Pick<Config, 'authCacheMs'>;
}

export function createApiKeyServices(deps: ApiKeyServiceDeps) {
  const credentialCache = new CredentialCache<AuthContext>(deps.clock, deps.config.authCacheMs);
  return {
    apiKeys: new ApiKeyService(new ApiKeyStore(deps.db, credentialCache), deps.audit, deps.clock),
    credentialCache,
  };
}
