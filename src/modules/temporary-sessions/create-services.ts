// Builds the temporary-sessions area's services. Route modules receive these, not the whole composition root.
import type { Kysely } from 'kysely';
import type { RateLimits, TemporarySessionConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { EmailProvider } from '../../providers/email/interface.js';
import type { SmsProvider } from '../../providers/sms/interface.js';
import type { CallService } from '../calls/service.js';
import type { CallSessionService } from '../calls/session-service.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { loadCallTypes } from './call-types.js';
import { TemporarySessionService } from './service.js';
import { TemporarySessionStore } from './store.js';

export interface TemporarySessionServiceDeps {
  db: Kysely<Database>;
  config: TemporarySessionConfig;
  tokens: ServiceTokens;
  singleUse: SingleUseTokens;
  sms: SmsProvider;
  email: EmailProvider;
  calls: CallService;
  sessions: CallSessionService;
  limiter: RateLimiter;
  /** Its own rules: codes sent per user, phone and IP, and code submissions per user. */
  rateLimits: Pick<
    RateLimits,
    'temporarySessionPerUser' | 'temporarySessionPerPhone' | 'temporarySessionPerIp' | 'temporarySubmitPerUser'
  >;
  clock: Clock;
  masterKey: Buffer;
  firstName: (userId: string) => Promise<string | null>;
}

export function createTemporarySessionServices(deps: TemporarySessionServiceDeps) {
  const temporary = new TemporarySessionService({
    ...deps,
    types: loadCallTypes(deps.config.callTypesFile),
    numbers: deps.config.numbers,
    store: new TemporarySessionStore(deps.db),
  });
  return { temporary };
}

export type TemporarySessionServices = ReturnType<typeof createTemporarySessionServices>;
