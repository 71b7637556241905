// Builds telephony's services (numbers and addresses, inbound
// configurations, SMS). Billing is reached only through BillingAccount, the
// data plane only through its services, knowledge bases through a lookup.
import type { Kysely } from 'kysely';
import type { RateLimitRule } from '../../config.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import type { BillingAccount } from '../billing/account.js';
import type { ObjectService } from '../data/objects-service.js';
import type { RootService } from '../data/root-service.js';
import type { ServiceKeyring } from '../data/server-keys.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { EventRecorder } from '../events/recorder.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { InboundConfigurationService, type KnowledgeBaseLookup } from './inbound-service.js';
import { PhoneNumberService } from './numbers-service.js';
import { PriceTokens } from './price-token.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import { SmsService } from './sms-service.js';
import { TelephonyStore } from './store.js';

export interface TelephonyServiceDeps {
  db: Kysely<Database>;
  providers: TelephonyProviders;
  billing: BillingAccount;
  data: { objects: ObjectService; root: RootService; serviceKeys: ServiceKeyring; serviceTokens: ServiceTokens };
  /** The knowledge area's lookup; null refuses every knowledge_base_id. */
  knowledge: KnowledgeBaseLookup | null;
  eventRecorder: EventRecorder;
  limiter: RateLimiter;
  clock: Clock;
  publicUrl: string;
  smsSendPerUser: RateLimitRule;
  /** Price of one SMS segment in ten-thousandths of a dollar (SMS_PRICE_USD). */
  smsSegmentPrice: number;
  singleUse: SingleUseTokens;
}

export function createTelephonyServices(deps: TelephonyServiceDeps) {
  const { providers, clock } = deps;
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
    deps.publicUrl,
  );
  const sms = new SmsService(store, providers, deps.eventRecorder, deps.limiter, deps.billing, clock, {
    publicUrl: deps.publicUrl,
    sendPerUser: deps.smsSendPerUser,
    segmentPrice: deps.smsSegmentPrice,
  });
  return {
    numbers,
    inbound,
    sms,
    /** Stops the sandbox's scheduled callbacks (app close). */
    stop: () => providers.stop(),
  };
}

export type TelephonyServices = ReturnType<typeof createTelephonyServices>;
