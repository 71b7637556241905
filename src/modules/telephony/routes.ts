// Telephony routes: numbers and addresses (spec 4.11), inbound configurations
// (4.12), SMS (4.13) and the provider's SMS status callbacks.
import type { App } from '../../http/types.js';
import type { InboundConfigurationService } from './inbound-service.js';
import type { PhoneNumberService } from './numbers-service.js';
import type { SmsService } from './sms-service.js';
import { inboundRoutes } from './inbound-routes.js';
import { numberRoutes } from './numbers-routes.js';
import { smsRoutes } from './sms-routes.js';

/** What the telephony routes touch: numbers, inbound configurations, SMS, and the sandbox's stop (before the server closes). */
export interface TelephonyRouteDeps {
  numbers: PhoneNumberService;
  inbound: InboundConfigurationService;
  sms: SmsService;
  stop: () => Promise<void> | void;
}

export async function telephonyRoutes(app: App, telephony: TelephonyRouteDeps) {
  // Before the server closes: the sandbox's calls and its keep-alive connections to this server end first.
  app.addHook('preClose', async () => telephony.stop());
  numberRoutes(app, telephony.numbers);
  inboundRoutes(app, telephony.inbound);
  await smsRoutes(app, telephony.sms);
}
