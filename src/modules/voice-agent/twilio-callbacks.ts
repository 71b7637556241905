// Twilio's callbacks about calls the voice agent carries (DESIGN.md "Voice
// agent"): progress (initiated, ringing, answered, completed, busy, …) and
// the asynchronous answering-machine verdict. Each is verified with
// X-Twilio-Signature first, then applied once (the report id is the call sid
// and status, so Twilio's retries change nothing).
import { invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { iso } from '../../lib/time.js';
import type { AudioProgress, CallStatus } from '../../providers/audio/interface.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import { type SignedParams, formValue, verifyTwilioCallback } from '../../providers/telephony/twilio-signature.js';
import type { LiveCalls } from './live-calls.js';
import type { CallStore } from '../calls/store.js';

/** Twilio's CallStatus → ours, with the outcome of the final ones. */
const TWILIO_STATUS: Record<string, { status: CallStatus; outcome?: AudioProgress['outcome'] }> = {
  queued: { status: 'queued' },
  initiated: { status: 'queued' },
  ringing: { status: 'ringing' },
  'in-progress': { status: 'in_progress' },
  completed: { status: 'completed', outcome: 'completed' },
  busy: { status: 'busy', outcome: 'busy' },
  'no-answer': { status: 'no_answer', outcome: 'no_answer' },
  canceled: { status: 'canceled' },
  failed: { status: 'failed', outcome: 'provider_error' },
};

/** A media heartbeat older than this means the instance that carried the stream has stopped. */
export const MEDIA_STALE_MS = 45_000;

export interface TwilioCallbackDeps {
  providers: TelephonyProviders;
  publicUrl: string;
  store: CallStore;
  live: LiveCalls;
  clock: Clock;
  /** Applies a report to the session (CallService.report). */
  report: (sessionId: string, reportId: string, progress: AudioProgress) => Promise<void>;
  /** Sets the outcome and reason of a final report before it is applied. */
  setOutcome: (sessionId: string, outcome: string, reason: string | null) => Promise<void>;
}

export class TwilioCallCallbacks {
  constructor(private readonly deps: TwilioCallbackDeps) {}

  /** POST /api/webhooks/twilio/call/{sessionId}. */
  async handleStatus(
    sessionId: string,
    requestUri: string,
    signature: string | undefined,
    params: SignedParams,
  ): Promise<void> {
    const session = await this.verified(sessionId, requestUri, signature, params);
    const twilioStatus = formValue(params, 'CallStatus') ?? '';
    const mapped = TWILIO_STATUS[twilioStatus];
    if (!mapped) throw invalidInput(`unknown CallStatus "${twilioStatus}"`);
    const now = this.deps.clock.now();
    if (mapped.status === 'in_progress') await this.deps.store.markAnswered(sessionId, now);
    const progress: AudioProgress = { status: mapped.status, at: iso(now) };
    const duration = Number(formValue(params, 'CallDuration'));
    if (mapped.status === 'completed') {
      // While a stream is carried, its instance reports the end with the transcript; Twilio's word only ends calls nobody carries.
      // Its duration is kept all the same: should that instance have died, the call is charged what the carrier says (create-services.ts).
      const carried =
        session.media_instance !== null &&
        session.media_instance !== undefined &&
        Number(session.media_heartbeat_at ?? 0) > now - MEDIA_STALE_MS;
      if (carried) {
        if (Number.isInteger(duration) && duration >= 0) await this.deps.store.setCarrierDuration(sessionId, duration);
        return;
      }
    }
    if (Number.isInteger(duration) && duration >= 0 && mapped.status !== 'in_progress')
      progress.duration_seconds = duration;
    if (mapped.outcome) {
      progress.outcome = mapped.outcome;
      await this.deps.setOutcome(sessionId, mapped.outcome, mapped.status === 'failed' ? 'carrier_failed' : null);
    }
    await this.deps.report(sessionId, `twilio_${formValue(params, 'CallSid') ?? ''}_${twilioStatus}`, progress);
  }

  /** POST /api/webhooks/twilio/amd/{sessionId}: AnsweredBy reaches the live call here, or through the database elsewhere. */
  async handleMachineDetection(
    sessionId: string,
    requestUri: string,
    signature: string | undefined,
    params: SignedParams,
  ): Promise<void> {
    await this.verified(sessionId, requestUri, signature, params);
    const answeredBy = formValue(params, 'AnsweredBy');
    if (!answeredBy || !/^[a-z_]{1,40}$/.test(answeredBy)) throw invalidInput('AnsweredBy is missing');
    await this.deps.store.setAnsweredBy(sessionId, answeredBy);
    this.deps.live.get(sessionId)?.answeredBy(answeredBy);
  }

  private async verified(sessionId: string, requestUri: string, signature: string | undefined, params: SignedParams) {
    verifyTwilioCallback(this.deps.providers.list, signature, this.deps.publicUrl + requestUri, params);
    const session = await this.deps.store.findSession(sessionId);
    if (!session) throw notFound('call session');
    const callSid = formValue(params, 'CallSid');
    if (callSid && session.provider_call_id && callSid !== session.provider_call_id)
      throw invalidInput('CallSid does not match this session');
    return session;
  }
}
