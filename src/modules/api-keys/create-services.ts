// Builds the API-key area's service. Keys share the credential cache with
// sessions, so deleting a key ends its access on this instance at once.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../../http/auth.js';
import type { Clock } from '../../lib/clock.js';
import type { CredentialCache } from '../auth/credential-cache.js';
import type { AuditLog } from '../platform/audit.js';
import { ApiKeyService } from './service.js';
import { ApiKeyStore } from './store.js';

export interface ApiKeyServiceDeps {
  db: Kysely<Database>;
  credentialCache: CredentialCache<AuthContext>;
  audit: AuditLog;
  clock: Clock;
}

export function createApiKeyServices(deps: ApiKeyServiceDeps) {
  return { apiKeys: new ApiKeyService(new ApiKeyStore(deps.db, deps.credentialCache), deps.audit, deps.clock) };
}
