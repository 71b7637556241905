// POST /api/sandbox/calls/inbound (DESIGN.md "Sandbox carrier"): a call to one
// of the caller's own sandbox numbers, carried as Twilio would carry a call
// from a phone. The number is checked first (unknown or not yours: 404; one
// Twilio carries or that cannot take calls: 409). Then the sandbox carrier
// POSTs the number's signed voice webhook to PUBLIC_URL, which opens the
// session (or refuses the call in speech: not attached, no money, …), and
// follows its TwiML. The session id is that webhook's session, found by the
// carrier's call sid; what happens on the call afterwards is the call's
// business (its status, transcript and record), not this request's.
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { CallControl, SandboxScript } from '../../providers/telephony/interface.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { CallStore } from '../calls/store.js';

/** The caller's number when the request names none (a fictional 555-01xx number). */
export const SANDBOX_INBOUND_FROM = '+12125550142';

export interface SandboxInboundDeps {
  numbers: Pick<PhoneNumberService, 'get'>;
  /** The sandbox telephony provider's call control (it can ring). */
  control: Required<Pick<CallControl, 'ring'>>;
  store: Pick<CallStore, 'findByProviderCall'>;
  clock: Clock;
  publicUrl: string;
}

export class SandboxInboundCalls {
  constructor(private readonly deps: SandboxInboundDeps) {}

  /** Rings the user's number `numberId` → the session the call opened (answered or refused). */
  async ring(
    userId: string,
    input: { numberId: string; from?: string; script?: SandboxScript },
  ): Promise<{ sessionId: string }> {
    const { numbers, control, store, clock, publicUrl } = this.deps;
    const number = await numbers.get(userId, input.numberId);
    if (number.provider !== 'sandbox')
      throw new AppError(
        'conflict',
        `phone number ${input.numberId} is carried by ${number.provider}: call it from a phone`,
      );
    if (!number.capabilities.voice)
      throw new AppError('conflict', `phone number ${input.numberId} cannot take calls (SMS only)`);
    const since = clock.now();
    const { callSid, answered } = await control.ring({
      from: input.from ?? SANDBOX_INBOUND_FROM,
      to: number.phoneNumber,
      voiceUrl: `${publicUrl}/api/webhooks/twilio/voice/${encodeURIComponent(number.id)}`,
      ...(input.script ? { script: input.script } : {}),
    });
    const sessionId = answered ? await store.findByProviderCall(userId, callSid, since) : null;
    if (!sessionId)
      throw new AppError(
        'provider_error',
        `the sandbox carrier could not reach the voice webhook at PUBLIC_URL (${publicUrl}): is PUBLIC_URL this server?`,
      );
    return { sessionId };
  }
}
