// Builds telephony's services (numbers and addresses, inbound
// configurations, SMS). Billing is reached only through BillingAccount, the
// data plane only through its services, knowledge bases through a lookup.
// A number follows its subscription: billing announces an item paid or
// unpaid, and the numbers service, subscribed here, restores or suspends it.
import type { Config } from '../../config.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import type { BillingAccount } from '../billing/account.js';
import type { PaymentEventHandler } from '../billing/payment-events.js';
import type { ObjectService } from '../data/objects-service.js';
import type { RootService } from '../data/root-service.js';
import type { ServiceKeyring } from '../data/server-keys.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Core } from '../platform/core.js';
import { InboundConfigurationService, type KnowledgeBaseLookup } from './inbound-service.js';
import { PhoneNumberService } from './numbers-service.js';
import { PriceTokens } from './price-token.js';
import { SmsService } from './sms-service.js';
import { TelephonyStore } from './store.js';

export interface TelephonyServiceDeps extends Pick<Core, 'db' | 'limiter' | 'clock' | 'singleUse'> {
  /** PUBLIC_URL (the carrier's callbacks); the SMS rate limit; SMS_PRICE_USD (billing.smsSegmentPrice). */
  config: Pick<Config, 'publicUrl' | 'rateLimits' | 'billing'>;
  providers: TelephonyProviders;
  billing: BillingAccount;
  /** Billing's announcements of a subscription paid or unpaid (a number's follows). */
  billingEvents: Pick<PaymentEventHandler, 'onItemStatus'>;
  data: { objects: ObjectService; root: RootService; serviceKeys: ServiceKeyring; serviceTokens: ServiceTokens };
  /** The knowledge area's lookup; null refuses every knowledge_base_id. */
  knowledge: KnowledgeBaseLookup | null;
  eventRecorder: EventRecorder;
}

export function createTelephonyServices(deps: TelephonyServiceDeps) {
  const { providers, clock } = deps;
  const { publicUrl } = deps.config;
  const store = new TelephonyStore(deps.db);
  const prices = new PriceTokens(deps.data.serviceTokens);
  const numbers = new PhoneNumberService(store, providers, prices, deps.singleUse, deps.billing, clock);
  const inbound = new InboundConfigurationService(
    store,
    deps.data.objects,
    deps.data.root,
    providers,
    deps.knowledge,
    clock,
    publicUrl,
  );
  const sms = new SmsService(store, providers, deps.eventRecorder, deps.limiter, deps.billing, clock, {
    publicUrl,
    sendPerUser: deps.config.rateLimits.smsSendPerUser,
    // Ten-thousandths of a dollar.
    segmentPrice: deps.config.billing.smsSegmentPrice,
  });
  deps.billingEvents.onItemStatus((change) => numbers.followSubscription(change));
  return {
    numbers,
    inbound,
    sms,
    /** Stops the sandbox's scheduled callbacks (app close). */
    stop: () => providers.stop(),
  };
}

export type TelephonyServices = ReturnType<typeof createTelephonyServices>;
