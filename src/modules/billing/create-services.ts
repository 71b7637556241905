// Builds billing's services. Other areas reach billing through
// `services.billing.account` (the BillingAccount interface), never its tables.
import type { Kysely } from 'kysely';
import type { BillingSettings } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { PaymentsProvider } from '../../providers/payments/interface.js';
import type { BillingAccount } from './account.js';
import { loadCatalog } from './catalog.js';
import { CreditLedger } from './ledger.js';
import { BillingService, type UserLookup } from './service.js';
import { BillingStore } from './store.js';

export interface BillingServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  settings: BillingSettings;
  publicUrl: string;
  returnUrlOrigins: string[];
  payments: PaymentsProvider;
  users: UserLookup;
  clock: Clock;
}

export function createBillingServices(deps: BillingServiceDeps) {
  const store = new BillingStore(deps.db, deps.dialect);
  const catalog = loadCatalog(deps.settings);
  const ledger = new CreditLedger(store, deps.clock, deps.settings.balanceCacheMs);
  const billing = new BillingService(
    { publicUrl: deps.publicUrl, returnUrlOrigins: deps.returnUrlOrigins, topupDefaultUsd: deps.settings.topupDefaultUsd },
    store,
    ledger,
    catalog,
    deps.payments,
    deps.users,
    deps.clock,
  );
  const account: BillingAccount = billing;
  return { billing, account, catalog, payments: deps.payments };
}

export type BillingServices = ReturnType<typeof createBillingServices>;
