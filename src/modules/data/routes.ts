// The encrypted data plane's routes (spec 4.7, 4.8); all need data-plane
// authentication (auth level `verified`).
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { keyRoutes } from './keys-routes.js';
import { objectRoutes } from './objects-routes.js';
import { publishRoutes } from './publish-routes.js';
import { rootRoutes } from './root-routes.js';

export function dataRoutes(app: App, services: Services) {
  rootRoutes(app, services);
  keyRoutes(app, services);
  publishRoutes(app, services);
  objectRoutes(app, services);
}
