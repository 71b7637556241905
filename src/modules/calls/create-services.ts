// Builds the calls area's services. Route modules receive these, not the whole composition root.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { AudioProvider } from '../../providers/audio/interface.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { WebhookService } from '../webhooks/service.js';
import { CallChargeStore } from './charge-store.js';
import { type CallBilling, type CallDirection, CallCharges } from './charges.js';
import { CallService } from './service.js';
import { type CallSessionDeps, CallSessionService } from './session-service.js';
import { CallStore } from './store.js';

export interface CallServiceDepsIn {
  db: Kysely<Database>;
  dialect: Dialect;
  eventRecorder: EventRecorder;
  webhooks: WebhookService;
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
}

export function createCallServices(deps: CallServiceDepsIn) {
  const charges = deps.billing ? new CallCharges({ store: new CallChargeStore(deps.db, deps.dialect), billing: deps.billing, clock: deps.clock, ...deps.pricing }) : null;
  const calls = new CallService({ ...deps, charges, store: new CallStore(deps.db, deps.dialect), events: deps.eventRecorder });
  // The in-process audio server reports through the same handler as the webhook route.
  deps.audio.connect?.((sessionId, body, headers) => calls.handleAudioReport(sessionId, body, headers));
  return { calls, charges };
}

export type CallServices = ReturnType<typeof createCallServices>;

/** POST /api/session/call on top of the calls service and the areas a call references. */
export function createCallSessionServices(deps: CallSessionDeps) {
  return { sessions: new CallSessionService(deps) };
}

export type CallSessionServices = ReturnType<typeof createCallSessionServices>;
