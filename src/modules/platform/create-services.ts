// Builds the platform's shared pieces over its own tables: audit log, rate
// limiter, sandbox outbox, idempotency keys, single-use tokens and the job
// queue, and from them the core every other area is built with (core.ts).
// Other areas receive the pieces they name (a limiter, the idempotency
// service), never the platform store.
import type { DatabaseHandle } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { Secrets } from '../../secrets.js';
import { createSecretBox } from '../../lib/secret-box.js';
import { Outbox } from '../../providers/outbox.js';
import { AuditLog } from './audit.js';
import type { Core, Log } from './core.js';
import { IdempotencyService } from './idempotency.js';
import { IdempotencyStore } from './idempotency-store.js';
import { JobQueue } from './jobs.js';
import { RateLimiter } from './rate-limiter.js';
import { SingleUseTokens } from './single-use.js';
import { SingleUseStore } from './single-use-store.js';
import { PlatformStore } from './store.js';

export interface PlatformServiceDeps {
  database: Pick<DatabaseHandle, 'db' | 'dialect'>;
  clock: Clock;
  /** MASTER_KEY keys the secret box. */
  secrets: Pick<Secrets, 'masterKey'>;
  log: Log;
}

export function createPlatformServices(deps: PlatformServiceDeps) {
  const { clock, log } = deps;
  const { db, dialect } = deps.database;
  const platformStore = new PlatformStore(db);
  const audit = new AuditLog(platformStore, clock);
  const limiter = new RateLimiter(platformStore, clock);
  const singleUse = new SingleUseTokens(new SingleUseStore(db), clock);
  const secretBox = createSecretBox(deps.secrets.masterKey);
  const jobs = JobQueue.create(db, dialect, clock);
  jobs.reportErrorsTo(log);
  const core: Core = { db, dialect, clock, secretBox, limiter, audit, singleUse, jobs, log };
  return {
    platformStore,
    audit,
    limiter,
    outbox: new Outbox(platformStore, clock),
    idempotency: new IdempotencyService(new IdempotencyStore(db), clock),
    singleUse,
    secretBox,
    jobs,
    core,
  };
}

export type PlatformServices = ReturnType<typeof createPlatformServices>;
