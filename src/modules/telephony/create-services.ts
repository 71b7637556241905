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
  providers: { telephony: TelephonyProviders };
  /** The caller's billing account numbers and SMS are charged to. */
  account: BillingAccount;
  /** Billing's announcements of a subscription paid or unpaid (a number's follows). */
  billing: { events: Pick<PaymentEventHandler, 'onItemStatus'> };
  data: { objects: ObjectService; root: RootService; serviceKeys: ServiceKeyring; serviceTokens: ServiceTokens };
  /** The knowledge area's lookup; null refuses every knowledge_base_id. */
  knowledge: { lookup: KnowledgeBaseLookup | null };
  events: { eventRecorder: EventRecorder };
}

export function createTelephonyServices(deps: TelephonyServiceDeps) {
  const { clock } = deps;
  const providers = deps.providers.telephony;
  const { publicUrl } = deps.config;
  const store = new TelephonyStore(deps.db);
  const prices = new PriceTokens(deps.data.serviceTokens);
  const numbers = new PhoneNumberService(store, providers, prices, deps.singleUse, deps.account, clock);
  const inbound = new InboundConfigurationService(
    store,
    deps.data.objects,
    deps.data.root,
    providers,
    deps.knowledge.lookup,
    clock,
    publicUrl,
  );
  const sms = new SmsService(store, providers, deps.events.eventRecorder, deps.limiter, deps.account, clock, {
    publicUrl,
    sendPerUser: deps.config.rateLimits.smsSendPerUser,
    // Ten-thousandths of a dollar.
    segmentPrice: deps.config.billing.smsSegmentPrice,
  });
  deps.billing.events.onItemStatus((change) => numbers.followSubscription(change));
  return {
    numbers,
    inbound,
    sms,
    /** Stops the sandbox's scheduled callbacks (app close). */
    stop: () => providers.stop(),
  };
}

export type TelephonyServices = ReturnType<typeof createTelephonyServices>;
