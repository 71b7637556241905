// Telephony routes: numbers and addresses (spec 4.11), inbound configurations
// (4.12), SMS (4.13) and the provider's SMS status callbacks.
import type { App } from '../../http/types.js';
import type { Services } from '../../services.js';
import { inboundRoutes } from './inbound-routes.js';
import { numberRoutes } from './numbers-routes.js';
import { smsRoutes } from './sms-routes.js';

export async function telephonyRoutes(app: App, services: Services) {
  const { telephony } = services;
  // Before the server closes: the sandbox's calls and its keep-alive connections to this server end first.
  app.addHook('preClose', async () => telephony.stop());
  numberRoutes(app, telephony);
  inboundRoutes(app, telephony);
  await smsRoutes(app, telephony);
}
