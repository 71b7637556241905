// Builds billing's services. Other areas reach billing through
// `services.billing.account` (the BillingAccount interface), never its tables.
import type { Kysely } from 'kysely';
import type { BillingSettings, RateLimitRule } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import { SandboxPaymentsProvider } from '../../providers/payments/sandbox.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { BillingAccount } from './account.js';
import type { Catalog } from './catalog.js';
import { CreditLedger } from './ledger.js';
import { PaymentEventHandler } from './payment-events.js';
import { SandboxBilling } from './sandbox-service.js';
import { BillingService, type UserLookup } from './service.js';
import { BillingStore } from './store.js';

export interface BillingServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  settings: BillingSettings;
  catalog: Catalog;
  publicUrl: string;
  returnUrlOrigins: string[];
  payments: PaymentsProvider;
  users: UserLookup;
  limiter: RateLimiter;
  sessionsPerUser: RateLimitRule;
  clock: Clock;
  /** Hears each ledger write (metrics). */
  onLedgerWrite?: () => void;
}

export function createBillingServices(deps: BillingServiceDeps) {
  const store = new BillingStore(deps.db, deps.dialect, { ledgerWrite: deps.onLedgerWrite ?? (() => {}) });
  const { catalog } = deps;
  const ledger = new CreditLedger(store, deps.clock, deps.settings.balanceCacheMs);
  const billing = new BillingService(
    {
      publicUrl: deps.publicUrl,
      returnUrlOrigins: deps.returnUrlOrigins,
      sessionsPerUser: deps.sessionsPerUser,
      topupDefaultUsd: deps.settings.topupDefaultUsd,
    },
    store,
    ledger,
    catalog,
    deps.payments,
    deps.users,
    deps.limiter,
    deps.clock,
  );
  const account: BillingAccount = billing;
  const events = new PaymentEventHandler(store, ledger, catalog, deps.payments.name, deps.clock);
  // The sandbox pages exist only while the sandbox provider is active.
  const sandbox =
    deps.payments instanceof SandboxPaymentsProvider
      ? new SandboxBilling(store, events, billing, catalog, deps.payments, deps.clock)
      : null;
  return { billing, account, catalog, payments: deps.payments, events, sandbox, store };
}

export type BillingServices = ReturnType<typeof createBillingServices>;
