// The encrypted data plane's routes (spec 4.7, 4.8); all need data-plane
// authentication (auth level `verified`).
import type { App } from '../../http/types.js';
import type { KeyService } from './keys-service.js';
import type { ObjectService } from './objects-service.js';
import { type ObjectRouteLimits, objectRoutes } from './objects-routes.js';
import type { PublishService } from './publish-service.js';
import type { RootService } from './root-service.js';
import type { ServerService } from './server-service.js';
import { keyRoutes } from './keys-routes.js';
import { publishRoutes } from './publish-routes.js';
import { rootRoutes } from './root-routes.js';

/** What the data-plane routes touch: the data area's services and the body limits of object uploads. */
export interface DataRouteDeps {
  root: RootService;
  servers: ServerService;
  keys: KeyService;
  publish: PublishService;
  objects: ObjectService;
  limits: ObjectRouteLimits;
}

export function dataRoutes(app: App, deps: DataRouteDeps) {
  rootRoutes(app, deps.root, deps.servers);
  keyRoutes(app, deps.keys);
  publishRoutes(app, deps.publish);
  objectRoutes(app, deps.objects, deps.limits);
}
