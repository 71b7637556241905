// Builds billing's services. Other areas reach billing through
// `services.billing.account` (the BillingAccount interface), never its tables.
import type { Config } from '../../config.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import { SandboxPaymentsProvider } from '../../providers/payments/sandbox.js';
import type { Core } from '../platform/core.js';
import type { Metrics } from '../platform/metrics.js';
import type { BillingAccount } from './account.js';
import type { Catalog } from './catalog.js';
import { CreditLedger } from './ledger.js';
import { PaymentEventHandler } from './payment-events.js';
import { SandboxBilling } from './sandbox-service.js';
import { BillingService, type UserLookup } from './service.js';
import { BillingStore } from './store.js';

export interface BillingServiceDeps extends Pick<Core, 'db' | 'dialect' | 'limiter' | 'clock'> {
  /** BILLING_* (the balance cache, the default top-up); PUBLIC_URL and RETURN_URL_ORIGINS (checkout return pages); the sessions' rate limit. */
  config: Pick<Config, 'billing' | 'publicUrl' | 'returnUrlOrigins' | 'rateLimits'>;
  catalog: Catalog;
  providers: { payments: PaymentsProvider };
  /** The account's email (checkout), from the auth area's users. */
  auth: { users: { findById: UserLookup } };
  /** Counts each ledger write. */
  metrics?: Pick<Metrics, 'ledgerWrites'>;
}

export function createBillingServices(deps: BillingServiceDeps) {
  const { catalog, config, metrics } = deps;
  const { payments } = deps.providers;
  const users: UserLookup = (userId) => deps.auth.users.findById(userId);
  const store = new BillingStore(deps.db, deps.dialect, { ledgerWrite: () => metrics?.ledgerWrites.inc() });
  const ledger = new CreditLedger(store, deps.clock, config.billing.balanceCacheMs);
  const billing = new BillingService(
    {
      publicUrl: config.publicUrl,
      returnUrlOrigins: config.returnUrlOrigins,
      sessionsPerUser: config.rateLimits.billingSessionsPerUser,
      topupDefaultUsd: config.billing.topupDefaultUsd,
    },
    store,
    ledger,
    catalog,
    payments,
    users,
    deps.limiter,
    deps.clock,
  );
  const account: BillingAccount = billing;
  const events = new PaymentEventHandler(store, ledger, catalog, payments.name, deps.clock);
  // The sandbox pages exist only while the sandbox provider is active.
  const sandbox =
    payments instanceof SandboxPaymentsProvider
      ? new SandboxBilling(store, events, billing, catalog, payments, deps.clock)
      : null;
  return { billing, account, catalog, payments, events, sandbox, store };
}

export type BillingServices = ReturnType<typeof createBillingServices>;
