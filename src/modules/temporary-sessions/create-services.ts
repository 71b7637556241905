// Builds the temporary-sessions area's services. Route modules receive these, not the whole composition root.
import type { Config } from '../../config.js';
import type { EmailProvider } from '../../providers/email/interface.js';
import type { SmsProvider } from '../../providers/sms/interface.js';
import type { Secrets } from '../../secrets.js';
import type { UserStore } from '../auth/store.js';
import type { CallService } from '../calls/service.js';
import type { CallSessionService } from '../calls/session-service.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { Core } from '../platform/core.js';
import { loadCallTypes } from './call-types.js';
import { TemporarySessionService } from './service.js';
import { TemporarySessionStore } from './store.js';

export interface TemporarySessionServiceDeps extends Pick<Core, 'db' | 'singleUse' | 'limiter' | 'clock'> {
  /** TEMPORARY_* (the call types file, the operator's numbers); its own rate limits (codes sent per user, phone and IP, submissions per user). */
  config: Pick<Config, 'temporarySessions' | 'rateLimits'>;
  /** masterKey keys the codes' hashes. */
  secrets: Pick<Secrets, 'masterKey'>;
  data: { serviceTokens: ServiceTokens };
  /** Codes are sent by SMS or email. */
  providers: { sms: SmsProvider; email: EmailProvider };
  /** The calls service and POST /api/session/call's (the calls area's). */
  calls: { calls: CallService; callSessions: { sessions: CallSessionService } };
  /** The account's first name (whom the agent greets), from the auth area's users. */
  auth: { users: Pick<UserStore, 'findById'> };
}

export function createTemporarySessionServices(deps: TemporarySessionServiceDeps) {
  const { config } = deps;
  const { users } = deps.auth;
  const temporary = new TemporarySessionService({
    types: loadCallTypes(config.temporarySessions.callTypesFile),
    numbers: config.temporarySessions.numbers,
    tokens: deps.data.serviceTokens,
    singleUse: deps.singleUse,
    store: new TemporarySessionStore(deps.db),
    sms: deps.providers.sms,
    email: deps.providers.email,
    calls: deps.calls.calls,
    sessions: deps.calls.callSessions.sessions,
    limiter: deps.limiter,
    rateLimits: config.rateLimits,
    clock: deps.clock,
    masterKey: deps.secrets.masterKey,
    firstName: async (userId) => (await users.findById(userId))?.first_name ?? null,
  });
  return { temporary };
}

export type TemporarySessionServices = ReturnType<typeof createTemporarySessionServices>;
