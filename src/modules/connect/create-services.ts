// Builds the connect area's services from what it is given.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { ConnectorProvider } from '../../providers/connector/interface.js';
import type { BillingAccount } from '../billing/account.js';
import type { KeyService } from '../data/keys-service.js';
import type { ObjectService } from '../data/objects-service.js';
import type { RootService } from '../data/root-service.js';
import { ConnectService } from './service.js';
import { ConnectJobStore } from './store.js';

export interface ConnectServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The data plane's services the lead jobs write through. */
  data: { root: RootService; keys: KeyService; objects: ObjectService };
  providers: { connector: ConnectorProvider };
  /** The caller's billing account leads are charged to; null: not charged. */
  account: BillingAccount | null;
  clock: Clock;
  /** CONNECTOR_* (the lead price, the heartbeat and when a job counts as abandoned). */
  config: Pick<Config, 'connector'>;
}

export function createConnectServices(deps: ConnectServiceDeps) {
  const jobs = new ConnectService(
    deps.data,
    deps.providers.connector,
    deps.account,
    new ConnectJobStore(deps.db, deps.dialect),
    deps.clock,
    {
      leadPriceCents: deps.config.connector.leadPriceCents,
      heartbeatMs: deps.config.connector.heartbeatMs,
      abandonedAfterMs: deps.config.connector.staleAfterMs,
    },
  );
  return { jobs };
}

export type ConnectServices = ReturnType<typeof createConnectServices>;
