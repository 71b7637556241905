// Builds the data plane's services over one DataStore. Other modules reach
// the data plane through these (services.data.*), never through its tables.
import { StoreRecords } from './store-records.js';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { EventRecorder } from '../events/recorder.js';
import { KeyService } from './keys-service.js';
import { ObjectService } from './objects-service.js';
import { PublishService } from './publish-service.js';
import { RootService } from './root-service.js';
import { ServiceKeyring } from './server-keys.js';
import { ServerService } from './server-service.js';
import { SignedPayloads } from './signed-payloads.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { ServiceTokens } from './service-tokens.js';
import { DataStore } from './store.js';

export interface DataServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  secretBox: SecretBox;
  eventRecorder: EventRecorder;
  clock: Clock;
  /** OBJECT_CONTENT_LIMIT_BYTES; the answer budget of a children listing (see ObjectService.listRelated). */
  config: Pick<Config, 'objectContentLimitBytes'> & Partial<Pick<Config, 'relatedPageBytes'>>;
  singleUse: SingleUseTokens;
}

export function createDataServices(deps: DataServiceDeps) {
  const { secretBox, eventRecorder, clock } = deps;
  const store = new DataStore(deps.db, deps.dialect);
  const serviceKeys = new ServiceKeyring(store, secretBox, clock);
  const servers = new ServerService(store, serviceKeys, clock);
  const keys = new KeyService(store, servers, secretBox, eventRecorder, clock);
  const { objectContentLimitBytes, relatedPageBytes } = deps.config;
  const objects = new ObjectService(store, eventRecorder, clock, objectContentLimitBytes, relatedPageBytes);
  const publish = new PublishService(store, eventRecorder, clock);
  const root = new RootService(store, serviceKeys, keys, eventRecorder, clock);
  const signedPayloads = new SignedPayloads(servers, serviceKeys, deps.singleUse, clock);
  const serviceTokens = new ServiceTokens(serviceKeys, clock);
  const records = new StoreRecords(root, keys, objects);
  return { serviceKeys, servers, keys, objects, publish, root, signedPayloads, serviceTokens, records };
}

export type DataServices = ReturnType<typeof createDataServices>;
