// Numbers the service dials on behalf of a call (issue 46; docs/decisions/
// calls.md "Transfers are billed legs"). A transfer's `<Dial>` is a rated
// outbound leg: its number must be priced, it is authorized against the
// balance like a call (its own charge `<sessionId>:transfer`, hold and
// concurrency slot), the carrier is told its longest duration
// (`<Dial timeLimit>`), and the carrier's final duration of the dialled leg,
// POSTed signed to /api/webhooks/twilio/dial/{sessionId}, settles it, also
// long after the session ended. A leg authorized but never dialled is
// released (nothing charged); one whose final callback never comes is
// settled by housekeeping at its authorized maximum (CallCharges.closeOrphans).
// Pathways' transfer nodes are to dial through the same authorize → dial →
// callback steps.
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { CallControl, DialLeg, TelephonyProviders } from '../../providers/telephony/interface.js';
import { type SignedParams, formValue, verifyTwilioCallback } from '../../providers/telephony/twilio-signature.js';
import type { CallCharges, CallRefusal } from './charges.js';

/** Where a dialled leg's carrier reports its end: `${DIAL_CALLBACK_PATH}/{sessionId}`. */
export const DIAL_CALLBACK_PATH = '/api/webhooks/twilio/dial';

/** The charge of a call's transfer leg (one per call: a transfer ends the agent's part of it). */
export const transferLegRef = (sessionId: string) => `${sessionId}:transfer`;

const E164 = /^\+[1-9]\d{6,14}$/;
/** Twilio's final CallStatus values of a dialled (child) call; CallDuration counts from its answer. */
const FINAL_LEG_STATUSES = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);
/** A leg longer than a day is not a duration Twilio reports (its own `<Dial timeLimit>` maximum is 4 h). */
const MAX_REPORTED_SECONDS = 86_400;

/** What the model is told when a transfer is refused (the agent says it cannot transfer; no money or number details). */
const REFUSAL_MESSAGES: Record<CallRefusal, string> = {
  unsupported_destination: 'the transfer is not possible: this person cannot be called from this line',
  insufficient_funds: 'the transfer is not possible right now: the account cannot pay for it',
  concurrency_limit: 'the transfer is not possible right now: all lines are busy',
};

/** A leg authorized and ready to dial. */
export interface AuthorizedLeg {
  ref: string;
  sessionId: string;
  phone: string;
  maxDurationSeconds: number;
  holdCents: number;
  /** US dollars a minute: the dialled number's outbound rate plus the parent call's own. */
  ratePerMinute: number;
  /** What the carrier is told (`<Dial timeLimit>`, the leg's status callback). */
  dial: DialLeg;
}

export type LegAuthorization =
  | { ok: true; leg: AuthorizedLeg }
  | { ok: false; reason: CallRefusal | 'invalid_number' | 'arranged_before'; message: string };

export interface DialledLegDeps {
  charges: Pick<CallCharges, 'authorizeLeg' | 'settleCall' | 'priced' | 'markLegDialled'>;
  providers: TelephonyProviders;
  publicUrl: string;
  /** The call session a leg belongs to (its carrier call sid is the leg's ParentCallSid). */
  findSession(sessionId: string): Promise<{ user_id: string; provider_call_id: string | null } | undefined>;
}

export class DialledLegs {
  constructor(private readonly deps: DialledLegDeps) {}

  /** Whether `phone` may be dialled at all (E.164 and priced for outbound calls); POST /api/session/call checks human agents with it. */
  dialable(phone: string): boolean {
    return E164.test(phone) && this.deps.charges.priced(phone, 'outbound');
  }

  /**
   * Authorizes the transfer leg of call `sessionId` to `phone` for its
   * owner. A refusal is a value whose message the agent can say; nothing is
   * held or dialled then.
   */
  async authorizeTransfer(userId: string, sessionId: string, phone: string): Promise<LegAuthorization> {
    if (!E164.test(phone))
      return {
        ok: false,
        reason: 'invalid_number',
        message: 'the transfer is not possible: this person has no valid phone number',
      };
    const ref = transferLegRef(sessionId);
    let authorized;
    try {
      authorized = await this.deps.charges.authorizeLeg(userId, { ref, parentRef: sessionId, number: phone });
    } catch (err) {
      // The call's leg was authorized before (a hold refused in a race, or released): one leg per call.
      if (err instanceof AppError && err.code === 'conflict')
        return { ok: false, reason: 'arranged_before', message: 'the transfer is not possible any more on this call' };
      throw err;
    }
    if (!authorized.ok) return { ok: false, reason: authorized.reason, message: REFUSAL_MESSAGES[authorized.reason] };
    return {
      ok: true,
      leg: {
        ref,
        sessionId,
        phone,
        maxDurationSeconds: authorized.maxDurationSeconds,
        holdCents: authorized.holdCents,
        ratePerMinute: authorized.ratePerMinute,
        dial: {
          phone,
          timeLimitSeconds: authorized.maxDurationSeconds,
          statusCallbackUrl: `${this.deps.publicUrl}${DIAL_CALLBACK_PATH}/${encodeURIComponent(sessionId)}`,
        },
      },
    };
  }

  /** The carrier took the redirect to the leg of call `sessionId`: an unreported leg is then settled at its maximum, never before. */
  markDialled(sessionId: string): Promise<void> {
    return this.deps.charges.markLegDialled(transferLegRef(sessionId));
  }

  /** A leg that was never dialled (the call ended first, the redirect failed): its hold goes back whole. */
  async release(leg: AuthorizedLeg): Promise<void> {
    await this.deps.charges.settleCall(leg.ref, { seconds: 0 });
  }

  /**
   * POST /api/webhooks/twilio/dial/{sessionId}: the dialled leg's status.
   * X-Twilio-Signature first (400, nothing changed), then the session and
   * its carrier call (ParentCallSid); a final status settles the leg from
   * CallDuration, once (settleCall is idempotent by ref: a retried webhook
   * charges nothing more). Other statuses change nothing.
   */
  async handleCallback(
    sessionId: string,
    requestUri: string,
    signature: string | undefined,
    params: SignedParams,
  ): Promise<void> {
    verifyTwilioCallback(this.deps.providers.list, signature, this.deps.publicUrl + requestUri, params);
    const session = await this.deps.findSession(sessionId);
    if (!session) throw notFound('call session');
    const parent = formValue(params, 'ParentCallSid');
    if (parent && session.provider_call_id && parent !== session.provider_call_id)
      throw invalidInput('ParentCallSid does not match this session');
    const status = formValue(params, 'CallStatus') ?? '';
    if (!FINAL_LEG_STATUSES.has(status)) return;
    const raw = formValue(params, 'CallDuration') ?? (status === 'completed' ? undefined : '0');
    const seconds = Number(raw);
    if (raw === undefined || !/^\d+$/.test(raw) || seconds > MAX_REPORTED_SECONDS)
      throw invalidInput('CallDuration must be a whole number of seconds');
    const settled = await this.deps.charges.settleCall(transferLegRef(sessionId), { seconds });
    if (!settled) throw notFound('dialled leg');
  }
}

/** Redirects the live call `callSid` to the leg's `<Dial>`; throws when nothing can carry it (the leg is then released by its caller). */
export async function redirectToLeg(control: CallControl | null, callSid: string, leg: DialLeg): Promise<void> {
  if (!control) throw new AppError('provider_error', 'no carrier carries this call: it cannot be transferred');
  await control.transferCall(callSid, leg);
}
