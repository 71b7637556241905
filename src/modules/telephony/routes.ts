// Telephony routes: numbers and addresses (spec 4.11), inbound configurations
// (4.12), SMS (4.13) and the provider's SMS status callbacks.
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { inboundRoutes } from './inbound-routes.js';
import { numberRoutes } from './numbers-routes.js';
import { smsRoutes } from './sms-routes.js';

export async function telephonyRoutes(app: App, services: Services) {
  const { telephony } = services;
  app.addHook('onClose', async () => telephony.stop());
  numberRoutes(app, telephony);
  inboundRoutes(app, telephony);
  await smsRoutes(app, telephony);
}
