// Builds the calls area's services: its stores (createCallStores, shared with
// the voice agent), then createCallArea for the app (records, progress and
// money: the calls service, charges, transfers' legs, the call views and POST
// /api/session/call), or createCallServices alone for tests of the calls
// service. Route modules receive these, not the whole composition root.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { AudioProvider } from '../../providers/audio/interface.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import type { Catalog } from '../billing/catalog.js';
import type { CustomToolService } from '../custom-tools/service.js';
import type { ObjectService } from '../data/objects-service.js';
import type { SignedPayloads } from '../data/signed-payloads.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { PathwayService } from '../pathways/service.js';
import type { PersonaService } from '../personas/service.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { WebhookService } from '../webhooks/service.js';
import { CallDesigns } from './call-design.js';
import { CallViews } from './call-views.js';
import { CallChargeStore } from './charge-store.js';
import { type CallBilling, type CallDirection, CallCharges } from './charges.js';
import { CallService, type DoNotCallCheck } from './service.js';
import { type CallSessionDeps, CallSessionService } from './session-service.js';
import { CallStore } from './store.js';
import { DialledLegs } from './transfers.js';

/** The area's stores: the one store of `call_sessions` (and its progress reports) and the one of `call_charges`. */
export function createCallStores(db: Kysely<Database>, dialect: Dialect) {
  return { sessions: new CallStore(db, dialect), charges: new CallChargeStore(db, dialect) };
}

export type CallStores = ReturnType<typeof createCallStores>;

export interface CallServiceDepsIn {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The stores the voice agent shares (createCallStores); built here when absent (tests of the calls service). */
  stores?: CallStores;
  eventRecorder: EventRecorder;
  webhooks: WebhookService;
  /** Where calls are handed: the voice agent's carrier, or the configured audio server. */
  audio: AudioProvider;
  data: { records: StoreRecords };
  /** Billing's account; null: calls are not charged (tests of other parts only). */
  billing: CallBilling | null;
  /** What calls cost: voice rates (ten-thousandths of a dollar a minute) and limits. */
  pricing: {
    rate: (country: string, direction: CallDirection) => number | null;
    concurrencyLimit: (planKey: string | null) => number;
    defaultMaxSeconds: number;
  };
  clock: Clock;
  audioSecret: string;
  publicUrl: string;
  /** The account's do-not-call list, asked before every outbound call (the campaigns area keeps it). */
  doNotCall?: DoNotCallCheck;
}

export function createCallServices(deps: CallServiceDepsIn) {
  const stores = deps.stores ?? createCallStores(deps.db, deps.dialect);
  const charges = deps.billing
    ? new CallCharges({ store: stores.charges, billing: deps.billing, clock: deps.clock, ...deps.pricing })
    : null;
  const calls = new CallService({ ...deps, charges, store: stores.sessions, events: deps.eventRecorder });
  // The in-process audio server reports through the same handler as the webhook route.
  deps.audio.connect?.((sessionId, body, headers) => calls.handleAudioReport(sessionId, body, headers));
  return { calls, charges };
}

export type CallServices = ReturnType<typeof createCallServices>;

/** What calls cost: the voice pricing data, the concurrency limit (a plan may raise it) and the longest call (BILLING_CALL_*). */
export function callPricing(config: Pick<Config, 'billing'>, catalog: Pick<Catalog, 'voiceRate' | 'plan'>) {
  const { callConcurrencyPerUser, callMaxSeconds } = config.billing;
  return {
    rate: (country: string, direction: CallDirection) => catalog.voiceRate(country, direction),
    concurrencyLimit: (planKey: string | null) =>
      Math.max(callConcurrencyPerUser, (planKey ? catalog.plan(planKey)?.callConcurrency : undefined) ?? 0),
    defaultMaxSeconds: callMaxSeconds,
  };
}

/** POST /api/session/call on top of the calls service and the areas a call references. */
export function createCallSessionServices(deps: CallSessionDeps) {
  return { sessions: new CallSessionService(deps) };
}

export type CallSessionServices = ReturnType<typeof createCallSessionServices>;

/** Everything the calls area touches, as the composition root hands it over. */
export interface CallAreaDeps
  extends Omit<CallServiceDepsIn, 'stores' | 'data' | 'pricing' | 'publicUrl' | 'eventRecorder' | 'billing'> {
  stores: CallStores;
  events: { eventRecorder: EventRecorder };
  /** Billing's account; null: calls are not charged (tests of other parts only). */
  account: CallBilling | null;
  /** PUBLIC_URL (callbacks); BILLING_CALL_* (concurrency and the longest call). */
  config: Pick<Config, 'publicUrl' | 'billing'>;
  /** The voice rates and plans calls are priced with. */
  catalog: Pick<Catalog, 'voiceRate' | 'plan'>;
  data: { records: StoreRecords; signedPayloads: SignedPayloads; objects: ObjectService };
  /** Transfers dial their legs through the carrier of the call. */
  providers: { telephony: TelephonyProviders };
  numbers: PhoneNumberService;
  knowledge: KnowledgeService;
  integrations: IntegrationService;
  personas: PersonaService;
  /** Pathways a call names (inline, or by id from the owner's store). */
  pathways: PathwayService;
  /** Custom HTTP tools a call declares. */
  customTools: CustomToolService;
}

/**
 * The calls area: the calls service (handing calls to `audio`), charges,
 * transfers as billed legs, the call views (GET /api/calls) and POST
 * /api/session/call, with the rules of a call's design every kind of call shares.
 */
export function createCallArea(deps: CallAreaDeps) {
  const { stores, config } = deps;
  const { publicUrl } = config;
  const pricing = callPricing(config, deps.catalog);
  const { eventRecorder } = deps.events;
  const { calls, charges } = createCallServices({ ...deps, eventRecorder, billing: deps.account, publicUrl, pricing });
  // Transfers dial billed legs (transfers.ts): authorized by the calls' charges, settled by the carrier's signed callback.
  const transfers = charges
    ? new DialledLegs({
        charges,
        providers: deps.providers.telephony,
        publicUrl,
        findSession: (id) => stores.sessions.findSession(id),
      })
    : null;
  // The pathway, custom tools and variables of every kind of call: one set of rules.
  const designs = new CallDesigns({ pathways: deps.pathways, customTools: deps.customTools });
  const views = new CallViews(stores.sessions, stores.charges, deps.data.records, (userId, objectId, limit) =>
    deps.data.objects.childIds(userId, objectId, limit),
  );
  const callSessions = createCallSessionServices({
    signedPayloads: deps.data.signedPayloads,
    calls,
    numbers: deps.numbers,
    knowledge: deps.knowledge,
    integrations: deps.integrations,
    personas: deps.personas,
    webhooks: deps.webhooks,
    designs,
    clock: deps.clock,
    ...(transfers ? { dialable: (phone: string) => transfers.dialable(phone) } : {}),
  });
  return { audio: deps.audio, stores, calls, charges, views, transfers, designs, callSessions };
}

export type CallArea = ReturnType<typeof createCallArea>;
