// Builds the campaigns area: the do-not-call list first (the calls area asks
// it before every outbound call), then, once calls exist, the campaigns
// service and this instance's dialer. Route modules receive these.
import type { Kysely } from 'kysely';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { CallCharges } from '../calls/charges.js';
import type { CallService } from '../calls/service.js';
import type { CallSessionService } from '../calls/session-service.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { WebhookService } from '../webhooks/service.js';
import { CampaignDialer, DEFAULT_DIALER_SETTINGS, type DialerSettings, campaignCall } from './dialer.js';
import { DoNotCallService } from './do-not-call-service.js';
import { DoNotCallStore } from './do-not-call-store.js';
import { CampaignService } from './service.js';
import { CampaignStore } from './store.js';

export function createDoNotCallServices(deps: { db: Kysely<Database>; clock: Clock }) {
  return { doNotCall: new DoNotCallService(new DoNotCallStore(deps.db), deps.clock) };
}

export interface CampaignAreaDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  clock: Clock;
  secretBox: SecretBox;
  doNotCall: DoNotCallService;
  records: StoreRecords;
  numbers: PhoneNumberService;
  events: { eventRecorder: EventRecorder };
  webhooks: WebhookService;
  /** The calls area: the calls service, POST /api/session/call's, and the charges (null: calls are not charged, every start is affordable). */
  calls: { calls: CallService; callSessions: { sessions: CallSessionService }; charges: CallCharges | null };
  /** The voice agent's carrier: this instance, as its claims name it. */
  carrier: { heartbeat: { instanceId: string } };
  /** A campaign's concurrency when it names none: BILLING_CALL_CONCURRENCY (billing.callConcurrencyPerUser). */
  config: Pick<Config, 'billing'>;
  /** The dialer's pace (DEFAULT_DIALER_SETTINGS unless given). */
  dialer?: DialerSettings;
  log: { warn(obj: unknown, msg: string): void };
}

export function createCampaignServices(deps: CampaignAreaDeps) {
  const { calls, charges } = deps.calls;
  const { sessions } = deps.calls.callSessions;
  const store = new CampaignStore(deps.db, deps.dialect);
  const campaigns = new CampaignService({
    store,
    records: deps.records,
    numbers: deps.numbers,
    events: deps.events.eventRecorder,
    webhooks: deps.webhooks,
    secretBox: deps.secretBox,
    clock: deps.clock,
    affordable: async (userId, phone) => (charges ? charges.affordsOneMinute(userId, phone) : { ok: true }),
    checkCall: async (userId, definition, contact) => void (await campaignCall(sessions, userId, definition, contact)),
    defaultMaxConcurrent: deps.config.billing.callConcurrencyPerUser,
  });
  const dialer = new CampaignDialer({
    store,
    campaigns,
    doNotCall: deps.doNotCall,
    calls,
    sessions,
    clock: deps.clock,
    instanceId: deps.carrier.heartbeat.instanceId,
    settings: deps.dialer ?? DEFAULT_DIALER_SETTINGS,
    log: deps.log,
  });
  // Every call's end, on whichever instance accounted for it, decides its campaign contact.
  // A failure here is left to the dialer's sweep (it looks up calls whose end it did not hear of).
  calls.onFinished((session, final, accounted) =>
    dialer
      .callFinished(session, final, accounted)
      .catch((err: unknown) => deps.log.warn({ err, sessionId: session.id }, 'campaign contact not moved on')),
  );
  return { campaigns, dialer, doNotCall: deps.doNotCall, campaignStore: store };
}

export type CampaignServices = ReturnType<typeof createCampaignServices>;
