// Builds the pathways area's service from the data plane's store records
// (a pathway named by id is read, and decrypted, from the owner's store).
import type { StoreRecords } from '../data/store-records.js';
import { PathwayService } from './service.js';

export interface PathwayServiceDeps {
  records: Pick<StoreRecords, 'read'>;
}

export function createPathwayServices(deps: PathwayServiceDeps) {
  return { pathways: new PathwayService(deps.records) };
}

export type PathwayServices = ReturnType<typeof createPathwayServices>;
