// Builds the platform's shared pieces over its own tables: audit log, rate
// limiter, sandbox outbox, idempotency keys and single-use tokens. Other areas
// receive the pieces they name (a limiter, the idempotency service), never
// the platform store.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { Outbox } from '../../providers/outbox.js';
import { AuditLog } from './audit.js';
import { IdempotencyService } from './idempotency.js';
import { IdempotencyStore } from './idempotency-store.js';
import { RateLimiter } from './rate-limiter.js';
import { SingleUseTokens } from './single-use.js';
import { SingleUseStore } from './single-use-store.js';
import { PlatformStore } from './store.js';

export interface PlatformServiceDeps {
  db: Kysely<Database>;
  clock: Clock;
}

export function createPlatformServices(deps: PlatformServiceDeps) {
  const { db, clock } = deps;
  const platformStore = new PlatformStore(db);
  return {
    platformStore,
    audit: new AuditLog(platformStore, clock),
    limiter: new RateLimiter(platformStore, clock),
    outbox: new Outbox(platformStore, clock),
    idempotency: new IdempotencyService(new IdempotencyStore(db), clock),
    singleUse: new SingleUseTokens(new SingleUseStore(db), clock),
  };
}
