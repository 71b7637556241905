// What most areas are built with, made once by the platform area
// (createPlatformServices) before any other: the database and its dialect,
// the clock, the secret box, the platform's shared pieces (rate limiter, audit
// log, single-use tokens, the durable job queue) and the log. Each area's
// create-services names the parts it uses (Pick<Core, …>), so a test builds
// an area from a test app's pieces.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditLog } from './audit.js';
import type { JobQueue } from './jobs.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SingleUseTokens } from './single-use.js';

/** Where services log what they cannot answer with (the app's logger). */
export interface Log {
  warn(obj: unknown, msg: string): void;
  error(obj: unknown, msg: string): void;
}

export interface Core {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  secretBox: SecretBox;
  limiter: RateLimiter;
  audit: AuditLog;
  singleUse: SingleUseTokens;
  /** The one durable job queue (agent test runs, post-call analysis): started and stopped with the app. */
  jobs: JobQueue;
  log: Log;
}
