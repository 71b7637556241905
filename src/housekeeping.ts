// What housekeeping does every few minutes, across the areas (the composition
// root hands over the areas it built): expired credentials and limits, holds
// and charges nobody closed, calls nobody carries, ended jobs.
import type { Config } from './config.js';
import type { createAuthServices } from './modules/auth/create-services.js';
import type { BillingAccount } from './modules/billing/account.js';
import type { CallServices } from './modules/calls/create-services.js';
import { STALLED_AFTER_MS } from './modules/calls/service.js';
import type { createConnectServices } from './modules/connect/create-services.js';
import type { createPlatformServices } from './modules/platform/create-services.js';
import { Housekeeping } from './modules/platform/housekeeping.js';
import type { createTemporarySessionServices } from './modules/temporary-sessions/create-services.js';

/** Age after which housekeeping returns a credit hold nobody settled (longer than any call or purchase runs). */
const ABANDONED_HOLD_MS = 24 * 3600_000;

export interface HousekeepingAreas {
  /** The platform's stores and the job queue; its clock is housekeeping's. */
  platform: ReturnType<typeof createPlatformServices>;
  auth: ReturnType<typeof createAuthServices>;
  /** Billing's own account (holds nobody settled), whatever account the calls were given. */
  billing: { account: Pick<BillingAccount, 'settleAbandoned'> };
  connect: ReturnType<typeof createConnectServices>;
  calls: CallServices;
  temporarySessions: ReturnType<typeof createTemporarySessionServices>;
  /** BILLING_CALL_MAX_SECONDS: the longest call. */
  config: Pick<Config, 'billing'>;
}

export function createHousekeeping(areas: HousekeepingAreas): Housekeeping {
  const { platform, auth, calls } = areas;
  const { jobs, clock } = platform.core;
  return new Housekeeping(
    {
      revokedTokens: auth.expired.revokedTokens,
      // The longest rate-limit window is an hour; a day-old window can only restart.
      rateLimits: (now) => platform.platformStore.deleteStaleRateLimits(now - 24 * 3600_000),
      phoneCodes: auth.expired.phoneCodes,
      passwordResets: auth.expired.passwordResets,
      externalFlows: auth.expired.externalFlows,
      // Holds no caller closed within a day (it crashed or forgot): returned whole to the balance.
      abandonedHolds: async () => void (await areas.billing.account.settleAbandoned(ABANDONED_HOLD_MS)),
      idempotencyKeys: (now) => platform.idempotency.purgeExpired(now),
      // Jobs that ended a week ago: their results live with their areas (runs, analyses).
      endedJobs: (now) => jobs.purgeEnded(now - 7 * 24 * 3600_000),
      singleUseTokens: (now) => platform.singleUse.purgeExpired(now),
      abandonedLeadJobs: async () => void (await areas.connect.jobs.recoverAbandoned()),
      abandonedCalls: async () => void (await calls.calls.finishAbandoned()),
      // Calls whose audio server went quiet (a sandbox call whose process stopped) end as failed.
      stalledCalls: async () => void (await calls.calls.failStalled()),
      // Charges whose call was never recorded (a start cut off, or an authorizeCall nobody settled) after the longest call.
      orphanCallCharges: async () =>
        void (await calls.charges?.closeOrphans(STALLED_AFTER_MS + areas.config.billing.callMaxSeconds * 1000)),
      // After abandonedCalls: a call it just finished gets its summary in the same pass.
      temporarySessions: (now) => areas.temporarySessions.temporary.housekeep(now),
    },
    clock,
  );
}
